/**
 * Segment appends with O_DIRECT (src/ledger/direct-file.ts), on the real file system: whatever the sizes and
 * alignment of the appends, the file reads back exactly what was written, through the same handle and through
 * another descriptor; the zero padding past the logical end is cut at close and tolerated after a crash; writes
 * that are not appends, truncation, concurrent writers and a file system that refuses O_DIRECT stay correct.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIRECT_IO_ALIGN } from '../../../src/ledger/direct-file.js';
import { nodeLedgerFs, type LedgerFile } from '../../../src/ledger/fs.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { takesDirectIo } from '../../support/direct-io.js';

const REPO = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'ledgerline-direct-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Bytes that differ from position to position and from call to call. */
function pattern(length: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = (i * 31 + seed * 17 + (i >>> 8)) & 0xff;
  return b;
}

/** Splits `data` into up to three gathered buffers, as the commit pipeline hands a group over. */
function gathered(data: Buffer, seed: number): Buffer[] {
  if (data.length < 3) return [data];
  const a = (seed * 7919) % data.length;
  const b = a + ((seed * 104729) % (data.length - a));
  return [data.subarray(0, a), data.subarray(a, b), data.subarray(b)];
}

function isDirect(file: LedgerFile): boolean {
  return (file as unknown as { direct: boolean }).direct;
}

async function readBack(file: LedgerFile, position: number, length: number): Promise<Buffer> {
  const out = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = await file.read(out, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return out.subarray(0, got);
}

describe('direct appends', () => {
  it('read back exactly, however the appends are sized and aligned; the padding is zeros and is cut at close', async () => {
    const supported = takesDirectIo(dir);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: 3 * DIRECT_IO_ALIGN }) }, { weight: 2, arbitrary: fc.integer({ min: 0, max: 300_000 }) }), { minLength: 1, maxLength: 25 }),
        async (sizes) => {
          const file = path.join(dir, 'seg');
          const f = await nodeLedgerFs.open(file, 'w+', { directAppend: true });
          expect(isDirect(f)).toBe(supported);
          const expected: Buffer[] = [];
          let end = 0;
          try {
            for (const [i, size] of sizes.entries()) {
              const data = pattern(size, i);
              await f.writev(gathered(data, i), end);
              expected.push(data);
              // The same handle reads what it just appended (the page cache is kept coherent).
              expect((await readBack(f, end, size)).equals(data)).toBe(true);
              end += size;
              expect(await f.size()).toBe(end);
            }
            const onDisk = readFileSync(file);
            expect(onDisk.subarray(0, end).equals(Buffer.concat(expected))).toBe(true);
            // Past the logical end only the zeros of the last block's padding, less than a block of them.
            expect(onDisk.length - end).toBeLessThan(DIRECT_IO_ALIGN);
            expect(onDisk.subarray(end).every((b) => b === 0)).toBe(true);
          } finally {
            await f.close();
          }
          expect(statSync(file).size).toBe(end);
          expect(readFileSync(file).equals(Buffer.concat(expected))).toBe(true);
        },
      ),
      { numRuns: 40, seed: 20261205 },
    );
  });

  it('streams an append larger than its staging buffer in aligned pieces', async () => {
    const file = path.join(dir, 'big');
    const f = await nodeLedgerFs.open(file, 'w+', { directAppend: true });
    const first = pattern(1234, 1);
    const big = pattern(9 * 1024 * 1024 + 77, 2);
    const after = pattern(5000, 3);
    await f.writev([first], 0);
    await f.writev(gathered(big, 5), first.length);
    await f.writev([after], first.length + big.length);
    await f.close();
    expect(readFileSync(file).equals(Buffer.concat([first, big, after]))).toBe(true);
  });

  it('a write that is not an append, and a truncation, are followed by correct appends', async () => {
    const file = path.join(dir, 'seg');
    const f = await nodeLedgerFs.open(file, 'w+', { directAppend: true });
    const a = pattern(10_000, 1);
    await f.writev([a], 0);
    // Rewrite inside the file (a header, say), then append: the tail block is read back from the file.
    const patch = pattern(100, 2);
    await f.writev([patch], 9_950);
    a.set(patch.subarray(0, 50), 9_950);
    const b = pattern(7_000, 3);
    await f.writev([b], 10_050);
    // Truncate into the middle of a block, then append there.
    await f.truncate(12_345);
    expect(await f.size()).toBe(12_345);
    const c = pattern(3_000, 4);
    await f.writev([c], 12_345);
    await f.close();
    const expected = Buffer.concat([a, patch.subarray(50), b]).subarray(0, 12_345);
    expect(readFileSync(file).equals(Buffer.concat([expected, c]))).toBe(true);
  });

  it('a file left with its padding (a crash) reopens, is cut to its records and takes appends after them', async () => {
    const file = path.join(dir, 'seg');
    const f = await nodeLedgerFs.open(file, 'w+', { directAppend: true });
    const a = pattern(5_000, 1);
    await f.writev([a], 0);
    await f.datasync();
    const supported = isDirect(f);
    // What a crash leaves: the file as it is on disk before close() cuts the padding.
    const leftOver = readFileSync(file);
    await f.close();
    const fd = openSync(file, 'w');
    writeSync(fd, leftOver);
    closeSync(fd);
    expect(statSync(file).size).toBe(supported ? 2 * DIRECT_IO_ALIGN : a.length);
    // Recovery's steps: open r+, see the longer size, truncate to the last valid record, append.
    const g = await nodeLedgerFs.open(file, 'r+', { directAppend: true });
    expect(await g.size()).toBe(leftOver.length);
    await g.truncate(a.length);
    const b = pattern(4_000, 2);
    await g.writev([b], a.length);
    await g.close();
    expect(readFileSync(file).equals(Buffer.concat([a, b]))).toBe(true);
  });

  it('appends issued without waiting for each other are written in order, each after the one before', async () => {
    const file = path.join(dir, 'seg');
    const f = await nodeLedgerFs.open(file, 'w+', { directAppend: true });
    const parts = Array.from({ length: 12 }, (_, i) => pattern(777 + i * 1500, i));
    let at = 0;
    const writes = parts.map((p) => {
      const w = f.writev([p], at);
      at += p.length;
      return w;
    });
    await Promise.all(writes);
    // The next append starts from the last block as the last of them left it.
    const more = pattern(2222, 50);
    await f.writev([more], at);
    at += more.length;
    expect(readFileSync(file).subarray(0, at).equals(Buffer.concat([...parts, more]))).toBe(true);
    // A truncation and an append issued together: the append continues from the cut.
    const cut = at - 300;
    const truncated = f.truncate(cut);
    const tailPart = pattern(4321, 99);
    const appended = f.writev([tailPart], cut);
    await Promise.all([truncated, appended]);
    expect(await f.size()).toBe(cut + tailPart.length);
    await f.close();
    expect(readFileSync(file).equals(Buffer.concat([Buffer.concat([...parts, more]).subarray(0, cut), tailPart]))).toBe(true);
  });

  it('files appending at the same time do not share a staging buffer', async () => {
    const files = await Promise.all([0, 1, 2].map((i) => nodeLedgerFs.open(path.join(dir, `seg${i}`), 'w+', { directAppend: true })));
    const written: Buffer[][] = [[], [], []];
    const ends = [0, 0, 0];
    for (let round = 0; round < 20; round++) {
      await Promise.all(
        files.map(async (f, i) => {
          const data = pattern(50_000 + round * 997 + i * 13, round * 3 + i);
          const at = ends[i]!;
          ends[i] = at + data.length;
          written[i]!.push(data);
          await f.writev(gathered(data, round), at);
        }),
      );
    }
    for (const f of files) await f.close();
    for (let i = 0; i < 3; i++) expect(readFileSync(path.join(dir, `seg${i}`)).equals(Buffer.concat(written[i]!))).toBe(true);
  });

  it.runIf(existsSync('/dev/shm'))('on a file system that may refuse O_DIRECT (tmpfs), appends take direct I/O only where it is taken', async () => {
    const shm = mkdtempSync('/dev/shm/ledgerline-direct-');
    try {
      const supported = takesDirectIo(shm);
      const f = await nodeLedgerFs.open(path.join(shm, 'seg'), 'w+', { directAppend: true });
      expect(isDirect(f)).toBe(supported);
      const a = pattern(6_000, 1);
      const b = pattern(3_000, 2);
      await f.writev([a], 0);
      await f.writev([b], a.length);
      await f.close();
      expect(readFileSync(path.join(shm, 'seg')).equals(Buffer.concat([a, b]))).toBe(true);
    } finally {
      rmSync(shm, { recursive: true, force: true });
    }
  });

  it('a file opened for direct reads starts the read workers, before its first read, and they hold no process', (t) => {
    if (!takesDirectIo(dir)) t.skip();
    // In a process of its own, where nothing else has used the read pool: none before the open, both after it,
    // and the process still ends by itself (execFileSync would time out if the idle workers held it).
    const script = `
      import { nodeLedgerFs, readWorkersRunning } from ${JSON.stringify(path.join(REPO, 'src/ledger/fs.ts'))};
      const plain = await nodeLedgerFs.open(${JSON.stringify(path.join(dir, 'plain'))}, 'w+');
      console.log(readWorkersRunning());
      const file = await nodeLedgerFs.open(${JSON.stringify(path.join(dir, 'segment'))}, 'w+', { directAppend: true, directRead: true });
      console.log(readWorkersRunning());
      await plain.close();
      await file.close();
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8', timeout: 20_000 });
    expect(out.trim().split('\n')).toEqual(['0', '2']);
  });

  it('a file opened without directAppend, or read only, never bypasses the page cache', async () => {
    const file = path.join(dir, 'plain');
    const f = await nodeLedgerFs.open(file, 'w+');
    expect(isDirect(f)).toBe(false);
    await f.writev([pattern(100, 1)], 0);
    await f.close();
    const r = await nodeLedgerFs.open(file, 'r', { directAppend: true });
    expect(isDirect(r)).toBe(false);
    expect(await r.size()).toBe(100);
    await r.close();
  });
});

describe('the store with directIo', () => {
  /** Sizes of the segment files in the store's directory. */
  const segmentSizes = (store: string): number[] =>
    readdirSync(store)
      .filter((n) => n.endsWith('.seg'))
      .map((n) => statSync(path.join(store, n)).size);

  it.each([true, false])('directIo %s: the entries read back, before and after a reopen; only direct appends pad the open segment', async (directIo) => {
    const storeDir = path.join(dir, 'store');
    const entries = Array.from({ length: 50 }, (_, i) => pattern(100 + i * 211, i));
    let store = await LocalLedgerStore.open(storeDir, { directIo, cacheBytes: 0 });
    const writer = await store.create();
    for (const e of entries) await writer.append(e);
    // The tail cache is off: these reads come from the segment.
    const read = await store.read(writer.ledgerId, 0, entries.length - 1);
    expect(read.map((r) => Buffer.from(r.data).equals(entries[r.entryId]!))).toEqual(entries.map(() => true));
    // Direct appends leave the open segment padded to a whole block; buffered ones end where the records do.
    const blockAligned = segmentSizes(storeDir).every((size) => size % DIRECT_IO_ALIGN === 0);
    expect(blockAligned).toBe(directIo && takesDirectIo(dir));
    await store.close();
    // Closed: the padding is cut, and a reopened store finds every entry.
    store = await LocalLedgerStore.open(storeDir, { directIo, cacheBytes: 0 });
    const again = await store.read(writer.ledgerId, 0, entries.length - 1);
    expect(again.map((r) => Buffer.from(r.data).equals(entries[r.entryId]!))).toEqual(entries.map(() => true));
    await store.close();
  });
});
