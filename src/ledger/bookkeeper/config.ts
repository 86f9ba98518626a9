/**
 * The configuration of the BookKeeper ledger store: Kafka-style broker config names, BookKeeper's client
 * settings behind them, and the quorums derived from Kafka's replication settings.
 *
 * | config | BookKeeper's | default |
 * |---|---|---|
 * | `ledgerline.bookkeeper.metadata.service.uri` | `metadataServiceUri` | none (required): `zk+hierarchical://127.0.0.1:2181/ledgers` |
 * | `ledgerline.bookkeeper.ensemble.size` | ensemble size E | `default.replication.factor` |
 * | `ledgerline.bookkeeper.write.quorum.size` | write quorum Qw | the ensemble size |
 * | `ledgerline.bookkeeper.ack.quorum.size` | ack quorum Qa | `min.insync.replicas`, at most Qw |
 * | `ledgerline.bookkeeper.password` | the ledgers' password (master key: SHA-1("ledger" ++ it)) | empty, as Pulsar's |
 * | `ledgerline.bookkeeper.digest.type` | `digestType` | `CRC32C` (also `CRC32`, `MAC`, `DUMMY`) |
 * | `ledgerline.bookkeeper.add.entry.timeout.ms` | `addEntryTimeoutSec` | `30000` |
 * | `ledgerline.bookkeeper.read.entry.timeout.ms` | `readEntryTimeoutSec` | `30000` |
 * | `ledgerline.bookkeeper.speculative.read.timeout.ms` | `speculativeReadTimeout` | `2000` (0: off) |
 * | `ledgerline.bookkeeper.zk.session.timeout.ms` | `zkTimeout` | `30000` |
 * | `ledgerline.bookkeeper.tail.cache.bytes` | (Pulsar: `managedLedgerCacheSizeMB`) entries kept for tailing reads | `67108864` (0: off) |
 */
import { LedgerInvalidArgumentError } from '../errors.js';
import type { LedgerCreateOptions } from '../types.js';
import { DIGEST_TYPE_NAMES, DigestType } from './digest.js';

export const BK_CONFIG = {
  metadataServiceUri: 'ledgerline.bookkeeper.metadata.service.uri',
  ensembleSize: 'ledgerline.bookkeeper.ensemble.size',
  writeQuorumSize: 'ledgerline.bookkeeper.write.quorum.size',
  ackQuorumSize: 'ledgerline.bookkeeper.ack.quorum.size',
  password: 'ledgerline.bookkeeper.password',
  digestType: 'ledgerline.bookkeeper.digest.type',
  addTimeoutMs: 'ledgerline.bookkeeper.add.entry.timeout.ms',
  readTimeoutMs: 'ledgerline.bookkeeper.read.entry.timeout.ms',
  speculativeReadTimeoutMs: 'ledgerline.bookkeeper.speculative.read.timeout.ms',
  zkSessionTimeoutMs: 'ledgerline.bookkeeper.zk.session.timeout.ms',
  tailCacheBytes: 'ledgerline.bookkeeper.tail.cache.bytes',
} as const;

export const DEFAULT_TAIL_CACHE_BYTES = 64 * 1024 * 1024;

/** A ledger's quorums: ensemble size E ≥ write quorum Qw ≥ ack quorum Qa ≥ 1. */
export interface LedgerQuorum {
  readonly ensembleSize: number;
  readonly writeQuorum: number;
  readonly ackQuorum: number;
}

export interface BookKeeperStoreConfig {
  readonly metadataServiceUri: string;
  /** The quorum of a ledger whose creator names none: from the broker's default.replication.factor / min.insync.replicas. */
  readonly quorum: LedgerQuorum;
  /** The ledgerline.bookkeeper.* quorum sizes the operator set: they win over what a topic asks for. */
  readonly overrides?: Partial<LedgerQuorum>;
  readonly password: Buffer;
  readonly digestType: DigestType;
  readonly addTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly speculativeReadTimeoutMs: number;
  readonly zkSessionTimeoutMs: number;
  /** Bytes of recently acknowledged entries kept in memory for tailing reads (tail-cache.ts); default 64 MiB, 0 off. */
  readonly tailCacheBytes?: number;
  /** Largest entry (Kafka's message.max.bytes); BookKeeper's nettyMaxFrameSizeBytes bounds it too. */
  readonly maxEntryBytes: number;
}

/** A parsed metadataServiceUri: `zk[+hierarchical|+longhierarchical]://host:port[;host:port…]/path`. */
export interface MetadataServiceUri {
  readonly connectString: string;
  readonly ledgersRoot: string;
  readonly layout: 'hierarchical' | 'longhierarchical' | null;
}

export function parseMetadataServiceUri(uri: string): MetadataServiceUri {
  const m = /^(zk|metadata-store:zk)(?:\+(hierarchical|longhierarchical|null))?:\/\/([^/]+)(\/[^?#]*)?$/.exec(uri.trim());
  if (!m) throw new LedgerInvalidArgumentError(`Invalid value ${uri} for configuration ${BK_CONFIG.metadataServiceUri}: expected zk+hierarchical://host:port[;host:port]/ledgers`);
  const root = (m[4] ?? '/ledgers').replace(/\/+$/, '') || '/ledgers';
  return { connectString: m[3].split(';').join(','), ledgersRoot: root, layout: m[2] === 'hierarchical' || m[2] === 'longhierarchical' ? m[2] : null };
}

/**
 * Checks and completes a quorum: E, Qw, Qa as Kafka users expect them from replication.factor (E = Qw = RF)
 * and min.insync.replicas (Qa, at most Qw).
 */
export function quorumFrom(replicationFactor: number, minInsyncReplicas: number, overrides: Partial<LedgerQuorum> = {}): LedgerQuorum {
  const ensembleSize = overrides.ensembleSize ?? replicationFactor;
  const writeQuorum = overrides.writeQuorum ?? Math.min(ensembleSize, replicationFactor);
  const ackQuorum = overrides.ackQuorum ?? Math.max(1, Math.min(minInsyncReplicas, writeQuorum));
  const q = { ensembleSize, writeQuorum, ackQuorum };
  checkQuorum(q);
  return q;
}

/**
 * The quorum of one new ledger: explicit sizes in `options` first; else the topic's replication.factor and
 * min.insync.replicas (RF 3, min.insync 2 → E 3, Qw 3, Qa 2), under the operator's overrides; else the store's
 * default. Throws LL_ERR_INVALID_ARGUMENT for a combination that is not E ≥ Qw ≥ Qa ≥ 1.
 */
export function quorumForLedger(config: Pick<BookKeeperStoreConfig, 'quorum' | 'overrides'>, options: LedgerCreateOptions): LedgerQuorum {
  const d = options.replicationFactor !== undefined ? quorumFrom(options.replicationFactor, options.minInsyncReplicas ?? 1, config.overrides ?? {}) : config.quorum;
  const ensembleSize = options.ensembleSize ?? d.ensembleSize;
  const writeQuorum = options.writeQuorum ?? Math.min(d.writeQuorum, ensembleSize);
  const q: LedgerQuorum = { ensembleSize, writeQuorum, ackQuorum: options.ackQuorum ?? Math.min(d.ackQuorum, writeQuorum) };
  checkQuorum(q);
  return q;
}

export function checkQuorum(q: LedgerQuorum): void {
  const ok = [q.ensembleSize, q.writeQuorum, q.ackQuorum].every((n) => Number.isInteger(n) && n >= 1) && q.ensembleSize >= q.writeQuorum && q.writeQuorum >= q.ackQuorum;
  if (!ok) throw new LedgerInvalidArgumentError(`invalid BookKeeper quorum: ensemble ${q.ensembleSize}, write quorum ${q.writeQuorum}, ack quorum ${q.ackQuorum} (need ensemble ≥ write quorum ≥ ack quorum ≥ 1)`);
}

/** Reads the store's config from broker config values (Kafka names; `get` returns null when unset). */
export function bookKeeperStoreConfig(get: (name: string) => string | null | undefined, maxEntryBytes: number): BookKeeperStoreConfig {
  const num = (name: string, dflt: number): number => {
    const v = get(name);
    if (v === null || v === undefined || v.trim() === '') return dflt;
    const n = Number(v.trim());
    if (!Number.isInteger(n) || n < 0) throw new LedgerInvalidArgumentError(`Invalid value ${v} for configuration ${name}: Not a number of type INT`);
    return n;
  };
  const opt = (name: string): number | undefined => {
    const v = get(name);
    return v === null || v === undefined || v.trim() === '' ? undefined : num(name, 0);
  };
  const uri = get(BK_CONFIG.metadataServiceUri)?.trim();
  if (!uri) throw new LedgerInvalidArgumentError(`Missing required configuration "${BK_CONFIG.metadataServiceUri}" which has no default value.`);
  parseMetadataServiceUri(uri);
  const digestName = (get(BK_CONFIG.digestType) ?? 'CRC32C').trim().toUpperCase() || 'CRC32C';
  const digestType = DIGEST_TYPE_NAMES[digestName];
  if (digestType === undefined) throw new LedgerInvalidArgumentError(`Invalid value ${digestName} for configuration ${BK_CONFIG.digestType}: String must be one of: CRC32C, CRC32, MAC, DUMMY`);
  const overrides: Partial<LedgerQuorum> = {};
  const e = opt(BK_CONFIG.ensembleSize);
  const w = opt(BK_CONFIG.writeQuorumSize);
  const a = opt(BK_CONFIG.ackQuorumSize);
  if (e !== undefined) Object.assign(overrides, { ensembleSize: e });
  if (w !== undefined) Object.assign(overrides, { writeQuorum: w });
  if (a !== undefined) Object.assign(overrides, { ackQuorum: a });
  return {
    metadataServiceUri: uri,
    quorum: quorumFrom(num('default.replication.factor', 1), num('min.insync.replicas', 1), overrides),
    overrides,
    password: Buffer.from(get(BK_CONFIG.password) ?? '', 'utf8'),
    digestType,
    addTimeoutMs: num(BK_CONFIG.addTimeoutMs, 30_000),
    readTimeoutMs: num(BK_CONFIG.readTimeoutMs, 30_000),
    speculativeReadTimeoutMs: num(BK_CONFIG.speculativeReadTimeoutMs, 2_000),
    zkSessionTimeoutMs: num(BK_CONFIG.zkSessionTimeoutMs, 30_000),
    tailCacheBytes: num(BK_CONFIG.tailCacheBytes, DEFAULT_TAIL_CACHE_BYTES),
    maxEntryBytes,
  };
}
