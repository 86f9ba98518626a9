/**
 * Ledger metadata in BookKeeper's own format (LedgerMetadataSerDe, format version 3) and where it lives in
 * ZooKeeper (HierarchicalLedgerManager / LongHierarchicalLedgerManager), so that BookKeeper's tools, the
 * bookies' garbage collector and autorecovery read Ledgerline's ledgers as their own.
 *
 * A znode's bytes:
 *
 * ```
 *   "BookieMetadataFormatVersion\t3\n"  varint(n)  LedgerMetadataFormat (n bytes, protobuf: DataFormats.proto)
 * ```
 *
 * Paths (`StringUtils.getHybridHierarchicalLedgerPath`): ids below 2^31-1 are zero-padded to 10 digits and split
 * 2/4/4 (`/ledgers/00/0000/L0042`); larger ids, and every id under the long hierarchical layout, to 19 digits
 * split 3/4/4/4/4 (`/ledgers/000/0000/0000/0001/L0042`).
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { DigestType } from './digest.js';
import { LedgerMetadataFormat_State, LedgerMetadataFormatSchema, type LedgerMetadataFormat } from './proto/DataFormats_pb.js';

export const METADATA_HEADER = 'BookieMetadataFormatVersion\t';
export const METADATA_FORMAT_VERSION = 3;

/** BookKeeper's LedgerMetadata.State. */
export type BkLedgerState = 'OPEN' | 'IN_RECOVERY' | 'CLOSED';

/** One ensemble segment: the bookies storing entries from `firstEntryId` until the next segment's first. */
export interface EnsembleSegment {
  readonly firstEntryId: number;
  readonly bookies: readonly string[];
}

/** What a ledger's znode holds (BookKeeper's LedgerMetadata). */
export interface BkLedgerMetadata {
  readonly ensembleSize: number;
  readonly writeQuorumSize: number;
  readonly ackQuorumSize: number;
  readonly state: BkLedgerState;
  /** -1 while open (and for an empty ledger); the last entry once CLOSED. */
  readonly lastEntryId: number;
  /** Payload bytes of entries 0..lastEntryId, fixed at close (0 while open). */
  readonly length: number;
  readonly digestType: DigestType;
  readonly password: Uint8Array;
  /** Creation time, ms since the epoch. */
  readonly ctime: number;
  readonly ensembles: readonly EnsembleSegment[];
  readonly customMetadata: ReadonlyMap<string, Uint8Array>;
  /** BookKeeper's cToken (a creator's token; 0 when none). */
  readonly cToken: number;
}

const STATE_TO_PROTO: Record<BkLedgerState, LedgerMetadataFormat_State> = {
  OPEN: LedgerMetadataFormat_State.OPEN,
  IN_RECOVERY: LedgerMetadataFormat_State.IN_RECOVERY,
  CLOSED: LedgerMetadataFormat_State.CLOSED,
};

/** Serializes `m` as format version 3. */
export function serializeLedgerMetadata(m: BkLedgerMetadata): Buffer {
  const fmt = create(LedgerMetadataFormatSchema, {
    quorumSize: m.writeQuorumSize,
    ackQuorumSize: m.ackQuorumSize,
    ensembleSize: m.ensembleSize,
    length: BigInt(m.length),
    lastEntryId: BigInt(m.lastEntryId),
    state: STATE_TO_PROTO[m.state],
    ctime: BigInt(m.ctime),
    digestType: m.digestType as number,
    password: m.password,
    customMetadata: [...m.customMetadata].map(([key, value]) => ({ key, value })),
    segment: m.ensembles.map((s) => ({ firstEntryId: BigInt(s.firstEntryId), ensembleMember: [...s.bookies] })),
    cToken: BigInt(m.cToken),
  });
  const body = toBinary(LedgerMetadataFormatSchema, fmt);
  return Buffer.concat([Buffer.from(`${METADATA_HEADER}${METADATA_FORMAT_VERSION}\n`, 'utf8'), varint(body.length), body]);
}

/** The reason a znode's bytes are not ledger metadata this client reads. */
export class LedgerMetadataFormatError extends Error {
  readonly code = 'LL_ERR_BK_METADATA_FORMAT';
}

/** Parses a ledger znode (format version 3; versions 1 and 2, text formats of old clients, are refused). */
export function parseLedgerMetadata(bytes: Uint8Array): BkLedgerMetadata {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const head = Buffer.from(METADATA_HEADER, 'utf8');
  if (buf.length < head.length || !buf.subarray(0, head.length).equals(head)) throw new LedgerMetadataFormatError('ledger metadata header corrupt');
  const nl = buf.indexOf(0x0a, head.length);
  if (nl < 0 || nl - head.length > 4) throw new LedgerMetadataFormatError('ledger metadata header has no version line');
  const version = Number(buf.subarray(head.length, nl).toString('utf8'));
  if (version !== METADATA_FORMAT_VERSION) throw new LedgerMetadataFormatError(`ledger metadata format version ${version} is not supported (only ${METADATA_FORMAT_VERSION})`);
  let pos = nl + 1;
  let len = 0;
  let shift = 0;
  for (;;) {
    if (pos >= buf.length || shift > 28) throw new LedgerMetadataFormatError('ledger metadata length prefix truncated');
    const b = buf[pos++];
    len |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  if (len < 0 || pos + len > buf.length) throw new LedgerMetadataFormatError(`ledger metadata truncated: ${len} bytes announced, ${buf.length - pos} present`);
  let fmt: LedgerMetadataFormat;
  try {
    fmt = fromBinary(LedgerMetadataFormatSchema, buf.subarray(pos, pos + len));
  } catch (err) {
    throw new LedgerMetadataFormatError(`ledger metadata does not parse: ${(err as Error).message}`);
  }
  const state = (Object.keys(STATE_TO_PROTO) as BkLedgerState[]).find((k) => STATE_TO_PROTO[k] === fmt.state);
  if (!state) throw new LedgerMetadataFormatError(`unknown ledger state ${fmt.state}`);
  return {
    ensembleSize: fmt.ensembleSize,
    writeQuorumSize: fmt.quorumSize,
    // Metadata written before ack quorums existed has none: the ack quorum is the write quorum.
    ackQuorumSize: fmt.ackQuorumSize || fmt.quorumSize,
    state,
    lastEntryId: Number(fmt.lastEntryId),
    length: Number(fmt.length),
    digestType: ((fmt.digestType as number) || DigestType.CRC32) as DigestType,
    password: fmt.password,
    ctime: Number(fmt.ctime),
    ensembles: fmt.segment.map((s) => ({ firstEntryId: Number(s.firstEntryId), bookies: [...s.ensembleMember] })),
    customMetadata: new Map(fmt.customMetadata.map((e) => [e.key, e.value])),
    cToken: Number(fmt.cToken),
  };
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

/** The ensemble segment that stores `entryId`. */
export function ensembleFor(m: Pick<BkLedgerMetadata, 'ensembles'>, entryId: number): EnsembleSegment {
  let seg = m.ensembles[0];
  for (const s of m.ensembles) {
    if (s.firstEntryId > entryId) break;
    seg = s;
  }
  return seg;
}

/** `ledgerManagerFactoryClass` names of the two layouts this client speaks (from /ledgers/LAYOUT). */
export type LedgerLayout = 'hierarchical' | 'longhierarchical';

export const LAYOUT_FACTORIES: Readonly<Record<string, LedgerLayout>> = {
  'org.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory': 'hierarchical',
  'org.apache.bookkeeper.meta.LongHierarchicalLedgerManagerFactory': 'longhierarchical',
};

/** Parses /ledgers/LAYOUT (`<layout version>\n<factory class>:<factory version>\n`). */
export function parseLayout(text: string): LedgerLayout {
  const lines = text.split('\n').filter((l) => l.length > 0);
  const cls = (lines[1] ?? lines[0] ?? '').split(':')[0].trim();
  const layout = LAYOUT_FACTORIES[cls];
  if (!layout) throw new LedgerMetadataFormatError(`ledger manager ${cls || '(none)'} in LAYOUT is not supported: only HierarchicalLedgerManagerFactory and LongHierarchicalLedgerManagerFactory`);
  return layout;
}

/** A ledger's znode path under `root` (e.g. /ledgers), as BookKeeper's ledger manager names it. */
export function ledgerPath(root: string, ledgerId: number, layout: LedgerLayout): string {
  if (layout === 'hierarchical' && ledgerId < 0x7fffffff) {
    const s = String(ledgerId).padStart(10, '0');
    return `${root}/${s.slice(0, 2)}/${s.slice(2, 6)}/L${s.slice(6)}`;
  }
  const s = String(ledgerId).padStart(19, '0');
  return `${root}/${s.slice(0, 3)}/${s.slice(3, 7)}/${s.slice(7, 11)}/${s.slice(11, 15)}/L${s.slice(15)}`;
}

/** The ledger id of a path relative to the root (`00/0000/L0042` or `000/0000/0000/0001/L0042`), or null. */
export function ledgerIdOfPath(relative: string): number | null {
  const parts = relative.split('/');
  const last = parts[parts.length - 1];
  if (!last?.startsWith('L')) return null;
  parts[parts.length - 1] = last.slice(1);
  const short = parts.length === 3 && parts[0].length === 2 && parts[1].length === 4 && parts[2].length === 4;
  const long = parts.length === 5 && parts[0].length === 3 && parts.slice(1).every((p) => p.length === 4);
  if (!(short || long) || !parts.every((p) => /^\d+$/.test(p))) return null;
  const id = Number(parts.join(''));
  return Number.isSafeInteger(id) ? id : null;
}
