/**
 * Reads of the local ledger store from its segment files: the entries of a `read()` the tail cache
 * (tail-cache.ts) does not hold. Adjacent records of one segment are fetched with positioned reads of at most
 * READ_CHUNK_BYTES (a chunk); the chunks of one segment go in batches of up to READ_BATCH_BYTES, one message to a
 * read worker each (read-pool.ts), up to READ_CONCURRENCY batches at once, so a catch-up read streams and never
 * loads a whole file; every record is checked against its CRC-32C, ledger id, entry id and length (format.ts)
 * before its bytes are returned, as subarrays of its chunk's buffer.
 *
 * ```
 *   index: entry 7 → (seg 3, @4096, 900 B)   entry 8 → (seg 3, @5028, 1200 B)   entry 9 → (seg 5, @64, …)
 *          └──────────── one chunk: seg 3 [4096, 6260) ─────────────┘           └ next chunk: seg 5 ┘
 * ```
 */
import { LedgerCorruptError, LedgerError, NoSuchLedgerError } from './errors.js';
import { RECORD_HEADER_BYTES, RecordType, decodeRecordHeader, recordCrcMatches, segmentFileName } from './format.js';
import type { LedgerFile } from './fs.js';
import { PooledReadError, type RunsRead } from './read-pool.js';
import type { SegmentFiles } from './segment-files.js';
import { readFully, storageError, type Ledger, type LocalLedgerStoreStats, type Segment } from './store-state.js';
import type { LedgerEntry } from './types.js';

/** Largest single read when streaming old entries from disk. */
const READ_CHUNK_BYTES = 256 * 1024;
/** Parallel reads (batches) per `read()` call. */
const READ_CONCURRENCY = 4;
/** Chunks of one segment read with one `readRuns` call (one message to a read worker), up to this many bytes. */
const READ_BATCH_BYTES = 1024 * 1024;

/**
 * Reads entries [from, to) of a ledger into out[id - base]. Compaction may move these entries while the read
 * runs, so the segments the plan reads from are pinned before the first await: the checkpointer does not
 * delete a pinned segment.
 */
export async function readFromSegments(
  files: SegmentFiles,
  stats: LocalLedgerStoreStats,
  ledger: Ledger,
  from: number,
  to: number,
  out: LedgerEntry[],
  base: number,
): Promise<void> {
  const index = ledger.index;
  const chunks: Chunk[] = [];
  let id = from;
  while (id < to) {
    const seq = index.segmentOf(id);
    const runEnd = Math.min(to, index.segmentRunEnd(id));
    const position = index.offsetOf(id);
    let end = position + RECORD_HEADER_BYTES + index.lengthOf(id);
    let next = id + 1;
    while (next < runEnd && index.offsetOf(next) === end) {
      const recEnd = end + RECORD_HEADER_BYTES + index.lengthOf(next);
      if (recEnd - position > READ_CHUNK_BYTES) break;
      end = recEnd;
      next++;
    }
    chunks.push({ seq, position, bytes: end - position, first: id, count: next - id });
    id = next;
  }
  stats.diskReads += to - from;
  // Pin the segments now, before any await: compaction may move these entries meanwhile, and the segment
  // the plan reads from must not be deleted until the read is done.
  const pinned = new Set<Segment>();
  for (const c of chunks) {
    const segment = files.all.get(c.seq);
    if (segment && !segment.reclaimed && !pinned.has(segment)) {
      segment.pins++;
      pinned.add(segment);
    }
  }
  let nextChunk = 0;
  const worker = async (): Promise<void> => {
    while (nextChunk < chunks.length) {
      // A batch: the next chunks of one segment, up to READ_BATCH_BYTES (at least one chunk), claimed before any await.
      const first = nextChunk;
      const seq = chunks[first]!.seq;
      let bytes = chunks[first]!.bytes;
      let end = first + 1;
      while (end < chunks.length && chunks[end]!.seq === seq && bytes + chunks[end]!.bytes <= READ_BATCH_BYTES) bytes += chunks[end++]!.bytes;
      nextChunk = end;
      const batch = chunks.slice(first, end);
      const segment = files.all.get(seq);
      if (!segment || segment.reclaimed) {
        if (ledger.deleted) throw new NoSuchLedgerError(ledger.id);
        throw new LedgerCorruptError(`segment ${seq} holding ledger ${ledger.id} is missing`, { ledgerId: ledger.id, entryId: batch[0]!.first, file: segmentFileName(seq) });
      }
      let file: LedgerFile;
      try {
        file = await files.acquire(segment);
      } catch (err) {
        throw storageError('cannot open segment for reading', err, seq);
      }
      let read: RunsRead;
      try {
        read = await readRuns(file, batch, segment.size);
      } catch (err) {
        if (ledger.deleted) throw new NoSuchLedgerError(ledger.id);
        if (err instanceof LedgerError) throw err;
        if (err instanceof PooledReadError) {
          if (err.code === 'EOF') throw new LedgerCorruptError(`segment ${seq} ends at ${err.position}, inside a record of ledger ${ledger.id}`, { ledgerId: ledger.id, file: segmentFileName(seq), position: err.position });
          throw storageError('read failed', err, seq, batch[err.run]?.position);
        }
        throw storageError('read failed', err, seq, batch[0]!.position);
      } finally {
        files.release(segment);
      }
      for (let b = 0; b < batch.length; b++) parseChunk(ledger, batch[b]!, read.buffers[b]!, read.firstBadRecord?.[b] === -1, out, base);
    }
  };
  const workers: Promise<void>[] = [];
  for (let w = 0; w < Math.min(READ_CONCURRENCY, chunks.length); w++) workers.push(worker());
  const results = await Promise.allSettled(workers);
  for (const segment of pinned) segment.pins--;
  for (const r of results) if (r.status === 'rejected') throw r.reason;
}

interface Chunk {
  readonly seq: number;
  readonly position: number;
  readonly bytes: number;
  readonly first: number;
  readonly count: number;
}

/**
 * The chunks' bytes, one buffer each: in worker threads, their records' CRCs checked there, when the file can
 * (`readRuns`; its first `stableBytes`, the segment's committed bytes, may be served from a cache); else
 * through `read`, all the chunks at once.
 */
async function readRuns(file: LedgerFile, batch: readonly Chunk[], stableBytes: number): Promise<RunsRead> {
  if (file.readRuns) return file.readRuns(batch.map((c) => ({ position: c.position, length: c.bytes })), { checkRecords: true, stableBytes });
  const buffers = await Promise.all(
    batch.map(async (c) => {
      const buf = Buffer.allocUnsafe(c.bytes);
      await readFully(file, buf, c.position);
      return buf;
    }),
  );
  return { buffers, firstBadRecord: null };
}

/**
 * Checks each record of a chunk (ledger id, entry id, length, and the CRC-32C unless `crcsChecked`: the reader
 * found every record's CRC right) and hands out its payload, a subarray of `buf`.
 */
function parseChunk(ledger: Ledger, c: Chunk, buf: Buffer, crcsChecked: boolean, out: LedgerEntry[], base: number): void {
  const index = ledger.index;
  let p = 0;
  for (let k = 0; k < c.count; k++) {
    const entryId = c.first + k;
    const expected = index.lengthOf(entryId);
    const h = p + RECORD_HEADER_BYTES <= buf.length ? decodeRecordHeader(buf, p) : null;
    if (
      !h ||
      h.type !== RecordType.ENTRY ||
      h.ledgerId !== ledger.id ||
      h.arg !== entryId ||
      h.payloadLength !== expected ||
      p + RECORD_HEADER_BYTES + expected > buf.length ||
      (!crcsChecked && !recordCrcMatches(buf, p, expected))
    ) {
      throw new LedgerCorruptError(`entry ${entryId} of ledger ${ledger.id} does not match its checksum or framing`, {
        ledgerId: ledger.id,
        entryId,
        file: segmentFileName(c.seq),
        position: c.position + p,
      });
    }
    const start = p + RECORD_HEADER_BYTES;
    out[entryId - base] = { entryId, data: buf.subarray(start, start + expected) };
    p = start + expected;
  }
}
