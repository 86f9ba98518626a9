/**
 * Recovery's reads of the local ledger store's files: the checkpoint, segment headers, segment index files,
 * and the record-by-record scan of a segment that the checkpoint does not cover (or whose index is unusable).
 * What recovery does with them is in recovery.ts.
 */
import path from 'node:path';
import { LedgerCorruptError } from './errors.js';
import {
  CHECKPOINT_FILE,
  RECORD_HEADER_BYTES,
  RecordType,
  SEGMENT_HEADER_BYTES,
  decodeCheckpoint,
  decodeRecordHeader,
  decodeSegmentHeader,
  decodeSegmentIndex,
  readU64,
  recordCrcMatches,
  segmentFileName,
  type Checkpoint,
  type IndexRun,
  type SegmentIndex,
} from './format.js';
import type { LedgerFs } from './fs.js';
import { RecoveredEntries } from './recovered-entries.js';
import { newLedger, readFully, type RecoveringLedger, type Segment } from './store-state.js';
import type { LedgerId } from './types.js';

/** Chunk size when scanning a segment during recovery. */
const SCAN_CHUNK_BYTES = 4 * 1024 * 1024;

export async function readWhole(fs: LedgerFs, file: string): Promise<Buffer> {
  const f = await fs.open(file, 'r');
  try {
    const size = await f.size();
    const buf = Buffer.allocUnsafe(size);
    await readFully(f, buf, 0);
    return buf;
  } finally {
    await f.close().catch(() => undefined);
  }
}

/** The checkpoint of the store in `dir`; LL_ERR_LEDGER_CORRUPT if it does not decode. */
export async function readCheckpoint(fs: LedgerFs, dir: string): Promise<Checkpoint> {
  const c = decodeCheckpoint(await readWhole(fs, path.join(dir, CHECKPOINT_FILE)));
  if (typeof c === 'string') throw new LedgerCorruptError(`${CHECKPOINT_FILE}: ${c}`, { file: CHECKPOINT_FILE });
  return c;
}

/** A segment file's header, or why it is not one. */
export async function readSegmentHeader(fs: LedgerFs, file: string): Promise<ReturnType<typeof decodeSegmentHeader>> {
  const f = await fs.open(file, 'r');
  try {
    const buf = Buffer.alloc(SEGMENT_HEADER_BYTES);
    const n = await f.read(buf, 0, SEGMENT_HEADER_BYTES, 0);
    return decodeSegmentHeader(buf.subarray(0, n));
  } finally {
    await f.close().catch(() => undefined);
  }
}

/** A segment's index, or null if it is unreadable (recovery then scans the segment instead). */
export async function readSegmentIndex(fs: LedgerFs, file: string, seq: number): Promise<SegmentIndex | null> {
  try {
    const index = decodeSegmentIndex(await readWhole(fs, file));
    if (typeof index === 'string' || index.segmentSeq !== seq) return null;
    return index;
  } catch {
    return null;
  }
}

/** Takes a run of a segment index file into what recovery found of its ledger. */
export function applyRun(recovering: Map<LedgerId, RecoveringLedger>, segment: Segment, run: IndexRun): void {
  recovering.get(run.ledgerId)?.found.addRun(segment.seq, run.firstEntryId, run.offsets, run.lengths); // absent: deleted since
}

/**
 * Reads a segment record by record, in SCAN_CHUNK_BYTES pieces. `replay`: also apply control records
 * (segments the checkpoint does not cover). `limit`: the valid length recorded by the successor segment;
 * without one (the active segment) the scan stops at the first record that is torn or fails its CRC, which
 * must not be before `durableBytes` (known durable from the checkpoint).
 */
export async function scanSegment(
  fs: LedgerFs,
  segmentPath: string,
  segment: Segment,
  limit: number | null,
  durableBytes: number,
  replay: boolean,
  recovering: Map<LedgerId, RecoveringLedger>,
  isLast: boolean,
  /** Called with the id of every ledger a replayed CREATE record names. */
  sawLedger: (ledgerId: LedgerId) => void,
): Promise<void> {
  const file = await fs.open(segmentPath, 'r');
  try {
    const fileSize = await file.size();
    if (limit !== null && fileSize < limit) {
      throw new LedgerCorruptError(`segment ${segment.seq} is shorter (${fileSize}) than its recorded length ${limit}`, { file: segmentFileName(segment.seq) });
    }
    const end = limit ?? fileSize;
    let buf = Buffer.allocUnsafe(Math.min(SCAN_CHUNK_BYTES, Math.max(end, RECORD_HEADER_BYTES)));
    let bufStart = 0; // file position of buf[0]
    let bufLen = 0;
    let pos = SEGMENT_HEADER_BYTES;
    const ensure = async (from: number, bytes: number): Promise<boolean> => {
      if (from + bytes > end) return false;
      if (from >= bufStart && from + bytes <= bufStart + bufLen) return true;
      if (bytes > buf.length) buf = Buffer.allocUnsafe(bytes);
      const want = Math.min(buf.length, end - from);
      const n = await file.read(buf, 0, want, from);
      bufStart = from;
      bufLen = n;
      return n >= bytes;
    };
    for (;;) {
      if (!(await ensure(pos, RECORD_HEADER_BYTES))) break;
      const h = decodeRecordHeader(buf, pos - bufStart);
      if (!h) break;
      const total = RECORD_HEADER_BYTES + h.payloadLength;
      if (!(await ensure(pos, total))) break;
      if (!recordCrcMatches(buf, pos - bufStart, h.payloadLength)) break;
      const payloadAt = pos - bufStart + RECORD_HEADER_BYTES;
      switch (h.type) {
        case RecordType.ENTRY: {
          const r = recovering.get(h.ledgerId);
          r?.found.addEntry(segment.seq, h.arg, pos, h.payloadLength);
          break;
        }
        case RecordType.CREATE:
          if (replay) {
            if (!recovering.has(h.ledgerId)) {
              const createdAt = h.payloadLength >= 8 ? readU64(buf, payloadAt) : 0;
              recovering.set(h.ledgerId, { ledger: newLedger(h.ledgerId, Math.max(0, createdAt)), entryCount: null, found: new RecoveredEntries(h.ledgerId) });
            }
            sawLedger(h.ledgerId);
          }
          break;
        case RecordType.SEAL:
          if (replay) {
            const r = recovering.get(h.ledgerId);
            if (r && r.entryCount === null) {
              r.entryCount = h.arg;
              r.ledger.sealedAtMs = h.payloadLength >= 8 ? Math.max(0, readU64(buf, payloadAt)) : 0;
            }
          }
          break;
        case RecordType.DELETE:
          if (replay) recovering.delete(h.ledgerId);
          break;
      }
      pos += total;
    }
    if (limit !== null && pos !== limit) {
      throw new LedgerCorruptError(`segment ${segment.seq} has an invalid record at ${pos}, before its recorded end ${limit}`, {
        file: segmentFileName(segment.seq),
        position: pos,
      });
    }
    if (pos < durableBytes) {
      throw new LedgerCorruptError(`segment ${segment.seq} has an invalid record at ${pos}, below its checkpointed durable length ${durableBytes}`, {
        file: segmentFileName(segment.seq),
        position: pos,
      });
    }
    if (!isLast && limit === null) throw new LedgerCorruptError(`segment ${segment.seq} has no recorded length`, { file: segmentFileName(segment.seq) });
    segment.size = pos;
    segment.writePos = pos;
  } finally {
    await file.close().catch(() => undefined);
  }
}
