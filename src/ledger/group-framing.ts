/**
 * Framing of one group commit: the queued operations of a group turned into the records of format.ts, as the
 * buffers of one writev. Record headers and small payloads are copied into one staging buffer; payloads
 * larger than COPY_THRESHOLD are written by reference (the caller's buffer, not a copy).
 *
 * ```
 *   ops:      entry(L1,#4, 200 B)   entry(L2,#0, 64 KiB)   seal(L3)   entry(L1,#5, 1 KiB)
 *   staging:  [hdr│200 B][hdr]                  [hdr│8 B][hdr│1 KiB]
 *   writev:   └─ staging[0..] ─┘ └ 64 KiB ref ┘ └── staging[..end] ─┘
 * ```
 */
import { RECORD_HEADER_BYTES, RecordType, encodeControlRecord, sealRecordCrc, writeRecordHeader } from './format.js';
import type { Op } from './store-state.js';

/** Entries up to this size are copied into the group's staging buffer; larger ones are written by reference. */
const COPY_THRESHOLD = 4096;

/** Bytes the operation's record takes in a segment, header included. */
export function recordBytes(op: Op): number {
  if (op.kind === 'entry' || op.kind === 'move') return RECORD_HEADER_BYTES + op.data.length;
  return RECORD_HEADER_BYTES + (op.kind === 'delete' ? 0 : 8);
}

/**
 * Frames a group's records to be written at `position` (`total` bytes in all). Returns the buffers for one
 * writev and each operation's record offset in the segment. A seal takes its time now, as it is framed.
 */
export function frameGroup(group: Op[], position: number, total: number): { buffers: Buffer[]; offsets: number[] } {
  let stagingBytes = 0;
  for (const op of group) {
    stagingBytes += op.kind === 'entry' || op.kind === 'move' ? RECORD_HEADER_BYTES + (op.data.length <= COPY_THRESHOLD ? op.data.length : 0) : recordBytes(op);
  }
  const staging = Buffer.allocUnsafe(stagingBytes);
  const buffers: Buffer[] = [];
  const offsets: number[] = new Array<number>(group.length);
  let sp = 0;
  let stageStart = 0;
  let pos = position;
  for (let i = 0; i < group.length; i++) {
    const op = group[i]!;
    offsets[i] = pos;
    if (op.kind === 'entry' || op.kind === 'move') {
      const len = op.data.length;
      writeRecordHeader(staging, sp, RecordType.ENTRY, op.ledger.id, op.entryId, len);
      sealRecordCrc(staging, sp, op.data, op.kind === 'entry' ? op.crc : undefined);
      sp += RECORD_HEADER_BYTES;
      if (len <= COPY_THRESHOLD) {
        op.data.copy(staging, sp);
        sp += len;
      } else {
        buffers.push(staging.subarray(stageStart, sp), op.data);
        stageStart = sp;
      }
      pos += RECORD_HEADER_BYTES + len;
    } else {
      if (op.kind === 'seal') op.sealedAtMs = Date.now();
      const rec =
        op.kind === 'create'
          ? encodeControlRecord(RecordType.CREATE, op.ledger.id, 0, op.ledger.createdAtMs)
          : op.kind === 'seal'
            ? encodeControlRecord(RecordType.SEAL, op.ledger.id, op.ledger.nextEntryId, op.sealedAtMs)
            : encodeControlRecord(RecordType.DELETE, op.ledger.id, 0, null);
      rec.copy(staging, sp);
      sp += rec.length;
      pos += rec.length;
    }
  }
  if (sp > stageStart) buffers.push(staging.subarray(stageStart, sp));
  if (pos - position !== total) throw new Error('group framing size mismatch');
  return { buffers, offsets };
}
