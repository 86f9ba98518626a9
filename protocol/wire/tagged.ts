/**
 * Runtime support for generated message code: tagged fields (KIP-482) and the checks Kafka's generated
 * Java code makes when a value cannot be written in the requested version.
 *
 * A tag buffer is `uvarint count, then count × (uvarint tag, uvarint size, size bytes)`, tags ascending.
 * Tags the codec does not know are kept as raw bytes and written back unchanged, in tag order among the
 * known ones, so a message passes through Ledgerline without losing fields added by newer clients.
 */
import { EncodeError } from '../errors.js';
import { Writer } from './writer.js';

/** A tagged field this codec has no schema for, kept verbatim. */
export interface TaggedField {
  tag: number;
  data: Buffer;
}

/** A known tagged field to write: its tag and a function that writes its value. */
export interface TaggedWrite {
  tag: number;
  write: (w: Writer) => void;
}

const NO_TAGS: readonly TaggedWrite[] = [];
export { NO_TAGS };

export function writeTagBuffer(
  w: Writer,
  known: readonly TaggedWrite[],
  unknown: readonly TaggedField[] | undefined,
): void {
  const unknownCount = unknown?.length ?? 0;
  if (known.length === 0 && unknownCount === 0) {
    w.uvarint(0);
    return;
  }
  w.uvarint(known.length + unknownCount);
  let u = 0;
  const unknownSorted = unknownCount > 1 ? [...unknown!].sort((a, b) => a.tag - b.tag) : unknown;
  for (const k of known) {
    while (u < unknownCount && unknownSorted![u]!.tag < k.tag) writeUnknown(w, unknownSorted![u++]!);
    const sub = new Writer(64);
    k.write(sub);
    w.uvarint(k.tag);
    w.uvarint(sub.length);
    for (const c of sub.chunks()) w.raw(c);
  }
  while (u < unknownCount) writeUnknown(w, unknownSorted![u++]!);
}

function writeUnknown(w: Writer, f: TaggedField): void {
  w.uvarint(f.tag);
  w.uvarint(f.data.length);
  w.raw(f.data);
}

/** Structural equality over the values messages hold: primitives, bigint, Buffer, arrays, plain objects. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  // Own keys whose value is undefined count as absent. Walked without building key arrays: the generated
  // encoders ask this for every tagged struct of every partition they write (a FetchResponse's divergingEpoch,
  // currentLeader and snapshotId).
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let defined = 0;
  for (const k in ra) {
    if (!Object.hasOwn(ra, k) || ra[k] === undefined) continue;
    defined++;
    if (!Object.hasOwn(rb, k) || !deepEqual(ra[k], rb[k])) return false;
  }
  for (const k in rb) if (Object.hasOwn(rb, k) && rb[k] !== undefined) defined--;
  return defined === 0;
}

/** A null where the version does not allow one: Kafka's generated code refuses to serialize it too. */
export function nonNull<T>(value: T | null, field: string, version: number): T {
  if (value === null) throw new EncodeError(`${field} is null, which version ${version} cannot carry`);
  return value;
}

/** A non-default value in a version that lacks the field (and the field is not ignorable). */
export function notInVersion(field: string, version: number): never {
  throw new EncodeError(`${field} has a non-default value, which version ${version} cannot carry`);
}
