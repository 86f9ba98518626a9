/**
 * The read pool reads runs of real files in worker threads: exact bytes into buffers of their own, the CRCs of
 * runs of store records checked when asked, EOF and errno failures reported per run, many reads in flight
 * matched to their answers, and a process neither kept alive by idle workers nor cut short while a read is
 * pending. Direct reads go through aligned windows the workers cache: exact bytes whatever the cache holds,
 * windows kept only below what the caller says is stable, appends seen, EOF reported.
 */
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECORD_HEADER_BYTES, RecordType, sealRecordCrc, writeRecordHeader } from '../../../src/ledger/format.js';
import { PooledReadError, ReadPool } from '../../../src/ledger/read-pool.js';
import { takesDirectIo } from '../../support/direct-io.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');

describe('ReadPool', () => {
  let dir: string;
  let file: string;
  let data: Buffer;
  let fd: number;
  const pool = new ReadPool(2);

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-pool-'));
    file = join(dir, 'segment');
    data = randomBytes(3 * 1024 * 1024);
    writeFileSync(file, data);
    fd = openSync(file, 'r');
  });

  afterAll(async () => {
    await pool.close();
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads each run into a buffer of its own, exactly its bytes', async () => {
    const runs = [
      { fd, position: 0, length: 100 },
      { fd, position: 5000, length: 16 * 1024 },
      { fd, position: data.length - 300_000, length: 300_000 },
    ];
    const { buffers: bufs, firstBadRecord } = await pool.read(runs);
    expect(bufs).toHaveLength(3);
    expect(firstBadRecord).toBeNull();
    runs.forEach((r, i) => {
      const b = bufs[i]!;
      expect(b.equals(data.subarray(r.position, r.position + r.length))).toBe(true);
      // Its own memory: retaining it retains exactly its length.
      expect(b.byteOffset).toBe(0);
      expect(b.buffer.byteLength).toBe(r.length);
    });
    expect(await pool.read([])).toEqual({ buffers: [], firstBadRecord: null });
  });

  it('matches many reads in flight on both workers to their own answers', async () => {
    const runs = Array.from({ length: 200 }, (_, i) => ({ fd, position: (i * 7919) % (data.length - 20_000), length: 1 + ((i * 104_729) % 20_000) }));
    const answers = await Promise.all(runs.map((r) => pool.read([r, r])));
    answers.forEach(({ buffers: bufs }, i) => {
      const r = runs[i]!;
      for (const b of bufs) expect(b.equals(data.subarray(r.position, r.position + r.length))).toBe(true);
    });
  });

  it('reports a file that ends inside a run as EOF, with the run and where the file ended', async () => {
    const err = await pool.read([{ fd, position: 0, length: 10 }, { fd, position: data.length - 10, length: 20 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PooledReadError);
    expect(err).toMatchObject({ code: 'EOF', run: 1, position: data.length });
  });

  it("reports the system's error for a bad descriptor, and keeps serving", async () => {
    const closed = openSync(file, 'r');
    closeSync(closed);
    const err = await pool.read([{ fd: closed, position: 0, length: 10 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PooledReadError);
    expect(err).toMatchObject({ code: 'EBADF', run: 0 });
    const [b] = (await pool.read([{ fd, position: 1, length: 2 }])).buffers;
    expect(b!.equals(data.subarray(1, 3))).toBe(true);
  });

  it("checks runs of the store's records against their CRCs when asked, and says where the first bad one is", async () => {
    const records = (payloads: Buffer[]): Buffer =>
      Buffer.concat(
        payloads.map((p, i) => {
          const hdr = Buffer.alloc(RECORD_HEADER_BYTES);
          writeRecordHeader(hdr, 0, RecordType.ENTRY, 7, i, p.length);
          const rec = Buffer.concat([hdr, p]);
          sealRecordCrc(rec, 0, rec.subarray(RECORD_HEADER_BYTES));
          return rec;
        }),
      );
    const good = records([randomBytes(1000), Buffer.alloc(0), randomBytes(20_000)]);
    const flipped = Buffer.from(good);
    const secondAt = RECORD_HEADER_BYTES + 1000;
    const thirdAt = secondAt + RECORD_HEADER_BYTES;
    flipped[thirdAt + RECORD_HEADER_BYTES + 5000]! ^= 1; // a bit of the third record's payload
    const torn = good.subarray(0, good.length - 1); // the third record's length runs past the run
    const recordsFile = join(dir, 'records');
    writeFileSync(recordsFile, Buffer.concat([good, flipped, torn]));
    const rfd = openSync(recordsFile, 'r');
    try {
      const runs = [
        { fd: rfd, position: 0, length: good.length },
        { fd: rfd, position: good.length, length: flipped.length },
        { fd: rfd, position: 2 * good.length, length: torn.length },
      ];
      const checked = await pool.read(runs, { checkRecords: true });
      expect(checked.firstBadRecord).toEqual([-1, thirdAt, thirdAt]);
      expect(checked.buffers[1]!.equals(flipped)).toBe(true);
      expect((await pool.read(runs)).firstBadRecord).toBeNull();
    } finally {
      closeSync(rfd);
    }
  });

  it('starts every worker on start(), before any read, and none once closed', async () => {
    const fresh = new ReadPool(2);
    expect(fresh.running).toBe(0);
    fresh.start();
    expect(fresh.running).toBe(2);
    fresh.start();
    expect(fresh.running).toBe(2);
    expect((await fresh.read([{ fd, position: 0, length: 10 }])).buffers[0]!.equals(data.subarray(0, 10))).toBe(true);
    expect(fresh.running).toBe(2);
    await fresh.close();
    fresh.start();
    expect(fresh.running).toBe(0);
  });

  it('refuses reads once closed', async () => {
    const closedPool = new ReadPool(1);
    await closedPool.read([{ fd, position: 0, length: 1 }]);
    await closedPool.close();
    await expect(closedPool.read([{ fd, position: 0, length: 1 }])).rejects.toThrow(/closed/);
  });

  it('keeps a process alive while a read is pending and lets it exit once idle', () => {
    // Nothing else holds the child's event loop: the read must still complete, and the process must then end
    // on its own (execFileSync would time out if an idle worker held it).
    const script = `
      import { openSync } from 'node:fs';
      import { ReadPool } from ${JSON.stringify(join(REPO, 'src/ledger/read-pool.ts'))};
      const fd = openSync(${JSON.stringify(file)}, 'r');
      const pool = new ReadPool(2);
      const read = () => pool.read([{ fd, position: 0, length: 4 }]).then(({ buffers: [b] }) => console.log(b.toString('hex')));
      // A second read once the first worker has gone idle: a worker posted to again must still let go after it.
      read().then(() => setTimeout(read, 50));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8', timeout: 20_000 });
    const hex = data.subarray(0, 4).toString('hex');
    expect(out.trim().split('\n')).toEqual([hex, hex]);
  });
});

describe('ReadPool direct reads', () => {
  const WINDOW = 8192;
  let dir: string;
  let file: string;
  let data: Buffer;
  let fd: number;
  let directFd: number;
  let direct: boolean;
  let nextKey = 1000;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-pool-direct-'));
    direct = takesDirectIo(dir);
    file = join(dir, 'segment');
    data = randomBytes(20 * WINDOW + 1234);
    writeFileSync(file, data);
    fd = openSync(file, 'r');
    directFd = direct ? openSync(file, constants.O_RDONLY | constants.O_DIRECT) : -1;
  });

  afterAll(() => {
    closeSync(fd);
    if (direct) closeSync(directFd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads runs of every size and alignment exactly, through a cache smaller than the file, many at once', async (t) => {
    if (!direct) t.skip();
    const pool = new ReadPool(2, { windowBytes: WINDOW, cacheWindows: 9 });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.array(
              fc.integer({ min: 0, max: data.length }).chain((position) => fc.record({ position: fc.constant(position), length: fc.integer({ min: 0, max: Math.min(data.length - position, 5 * WINDOW) }) })),
              { minLength: 1, maxLength: 6 },
            ),
            { minLength: 1, maxLength: 8 },
          ),
          fc.boolean(),
          async (requests, cached) => {
            const source = { fd: directFd, key: nextKey++, cacheBelow: cached ? data.length : 0 };
            // Several requests in flight on one file's worker: their windows are shared, pinned and evicted meanwhile.
            const answers = await Promise.all(requests.map((runs) => pool.read(runs.map((r) => ({ fd, ...r })), { direct: source, checkRecords: true })));
            answers.forEach(({ buffers }, i) => {
              requests[i]!.forEach((r, j) => expect(buffers[j]!.equals(data.subarray(r.position, r.position + r.length))).toBe(true));
            });
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      await pool.close();
    }
  });

  it('keeps windows wholly below cacheBelow and reads the rest again each time', async (t) => {
    if (!direct) t.skip();
    const pool = new ReadPool(1, { windowBytes: WINDOW, cacheWindows: 8 });
    try {
      const runs = [{ fd, position: 100, length: 3 * WINDOW }]; // windows 0-3
      const source = { fd: directFd, key: nextKey++, cacheBelow: 2 * WINDOW }; // windows 0 and 1 may be kept
      await pool.read(runs, { direct: source });
      expect(pool.stats).toEqual({ windowReads: 4, windowHits: 0 });
      const again = await pool.read(runs, { direct: source });
      expect(again.buffers[0]!.equals(data.subarray(100, 100 + 3 * WINDOW))).toBe(true);
      expect(pool.stats).toEqual({ windowReads: 6, windowHits: 2 });
      // Another open of the same file has a key of its own, and a cache of its own.
      await pool.read(runs, { direct: { ...source, key: nextKey++ } });
      expect(pool.stats).toEqual({ windowReads: 10, windowHits: 2 });
    } finally {
      await pool.close();
    }
  });

  it('takes waiting reads in window order, so interleaved partitions larger than the cache share their windows', async (t) => {
    if (!direct) t.skip();
    // 4 concurrent reads, 8 cached windows. Four "partitions" interleaved in windows 0-15, each read as 8 requests
    // of two windows in turn (a fetch of partitions larger than the cache's reach): taken as they arrive, every
    // partition reads all 16 windows again (64 reads); in window order, each sweep reads them once.
    const pool = new ReadPool(1, { windowBytes: WINDOW, cacheWindows: 8 });
    try {
      const source = { fd: directFd, key: nextKey++, cacheBelow: data.length };
      const requests: { fd: number; position: number; length: number }[] = [];
      for (let p = 0; p < 4; p++) for (let b = 0; b < 8; b++) requests.push({ fd, position: 2 * b * WINDOW + p * 1000, length: WINDOW + 500 });
      const answers = await Promise.all(requests.map((r) => pool.read([r], { direct: source })));
      answers.forEach(({ buffers }, i) => expect(buffers[0]!.equals(data.subarray(requests[i]!.position, requests[i]!.position + requests[i]!.length))).toBe(true));
      expect(pool.stats.windowReads + pool.stats.windowHits).toBe(64);
      expect(pool.stats.windowReads).toBeLessThanOrEqual(24);
    } finally {
      await pool.close();
    }
  });

  it('sees what is written past cacheBelow, and reports a run past the end as EOF', async (t) => {
    if (!direct) t.skip();
    const pool = new ReadPool(1, { windowBytes: WINDOW, cacheWindows: 4 });
    const growing = join(dir, 'growing');
    // As the store's active segment: committed bytes, then zeros up to the block boundary that the next append overwrites.
    const first = randomBytes(WINDOW + 10);
    writeFileSync(growing, Buffer.concat([first, Buffer.alloc(WINDOW - 10)]));
    const gfd = openSync(growing, 'r+');
    const gdirect = openSync(growing, constants.O_RDONLY | constants.O_DIRECT);
    try {
      const source = { fd: gdirect, key: nextKey++, cacheBelow: first.length };
      expect((await pool.read([{ fd: gfd, position: 0, length: 2 * WINDOW }], { direct: source })).buffers[0]!.equals(Buffer.concat([first, Buffer.alloc(WINDOW - 10)]))).toBe(true);
      const err = await pool.read([{ fd: gfd, position: WINDOW, length: 2 * WINDOW }], { direct: source }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'EOF', run: 0, position: 2 * WINDOW });
      const more = randomBytes(WINDOW);
      writeSync(gfd, more, 0, more.length, first.length);
      const { buffers } = await pool.read([{ fd: gfd, position: WINDOW, length: 10 + WINDOW }], { direct: { ...source, cacheBelow: first.length + more.length } });
      expect(buffers[0]!.equals(Buffer.concat([first.subarray(WINDOW), more]))).toBe(true);
    } finally {
      closeSync(gfd);
      closeSync(gdirect);
      await pool.close();
    }
  });
});
