import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { randomDirectoryId, uuidToBytes, ZERO_UUID } from '../../../protocol/wire/uuid.js';
import { loadClusterId, loadDirectoryId } from '../../../src/cluster/identity.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('node identity', () => {
  it('keeps the cluster id and each node directory id across restarts of a sqlite metadata store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'identity-'));
    dirs.push(dir);
    const first = await openMetadataStore({ store: 'sqlite', dir });
    const clusterId = await loadClusterId(first);
    const dir1 = await loadDirectoryId(first, 1);
    const dir2 = await loadDirectoryId(first, 2);
    await first.close();
    const again = await openMetadataStore({ store: 'sqlite', dir });
    expect(await loadClusterId(again)).toBe(clusterId);
    expect(await loadDirectoryId(again, 1)).toBe(dir1);
    expect(await loadDirectoryId(again, 2)).toBe(dir2);
    expect(dir1).not.toBe(dir2);
    expect(uuidToBytes(dir1)).toHaveLength(16);
    await again.close();
  });

  it('agrees on one directory id when two starts race to create it', async () => {
    const store = await openMetadataStore({ store: 'memory', dir: '' });
    const ids = await Promise.all([loadDirectoryId(store, 3), loadDirectoryId(store, 3), loadDirectoryId(store, 3)]);
    expect(new Set(ids).size).toBe(1);
    await store.close();
  });

  it('never draws one of the reserved directory ids (KIP-858: UNASSIGNED, LOST, MIGRATING and the rest of the first hundred)', () => {
    for (let i = 0; i < 1_000; i++) {
      const b = uuidToBytes(randomDirectoryId());
      expect(b.readBigUInt64BE(0) === 0n && b.readBigUInt64BE(8) < 100n).toBe(false);
    }
    expect(randomDirectoryId()).not.toBe(ZERO_UUID);
  });
});
