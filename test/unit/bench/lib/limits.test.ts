/**
 * The disk limits measured beside the brokers (bench/lib/limits.ts), on the real temp directory: every mode
 * writes, the O_DIRECT one exactly where the file system takes O_DIRECT, and the file is gone afterwards.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { measureDisk } from '../../../../bench/lib/limits.js';
import { takesDirectIo } from '../../../support/direct-io.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerline-limits-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('measureDisk', () => {
  it('measures each write mode, O_DIRECT where the file system takes it, and leaves nothing behind', async () => {
    const direct = takesDirectIo(dir);
    const d = await measureDisk({ dir, sample: Buffer.alloc(1000, 7), chunkBytes: 10_000, maxBytes: 2 * 1024 * 1024, durationMs: 5_000 });
    expect(d.chunkBytes).toBe(10_000);
    expect(d.syncEachChunk.bytes).toBe(210 * 10_000);
    expect(d.syncEachChunk.mibPerSec).toBeGreaterThan(0);
    expect(d.syncAtEnd.bytes).toBe(210 * 10_000);
    if (direct) {
      // Chunks rounded up to 4 KiB: 12288 bytes each, until 2 MiB is passed.
      expect(d.directSyncEachChunk!.bytes).toBe(171 * 12_288);
      expect(d.directSyncEachChunk!.fsyncP50Ms).toBeGreaterThan(0);
    } else {
      expect(d.directSyncEachChunk).toBeUndefined();
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it.runIf(existsSync('/dev/shm'))('on a file system that may refuse O_DIRECT (tmpfs), measures it only where taken', async () => {
    const shm = mkdtempSync('/dev/shm/ledgerline-limits-');
    try {
      const d = await measureDisk({ dir: shm, sample: Buffer.alloc(1000, 7), chunkBytes: 4096, maxBytes: 64 * 1024, durationMs: 5_000 });
      expect(d.directSyncEachChunk !== undefined).toBe(takesDirectIo(shm));
      expect(d.syncAtEnd.bytes).toBe(Math.ceil((64 * 1024) / d.chunkBytes) * d.chunkBytes);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });
});
