/**
 * Typed helpers for the common requests, on top of the cluster view.
 *
 * Each helper takes partition-level entries, routes them to their leaders, sends one request per leader
 * (concurrently) and returns one result per entry, in the order given. A partition named more than once
 * goes into successive requests, in order (a Kafka request names each partition once). Kafka errors in the answers are
 * data (`errorCode`, with `errorName` for logs), as Kafka's own clients receive them: the caller decides
 * whether NOT_LEADER_OR_FOLLOWER means "refresh metadata and retry". Transport failures (connect, timeout,
 * disconnect) reject the returned promise.
 *
 * Record data is bytes: `produce` sends pre-built record batches (magic v2) as given, `fetch` returns the
 * record set bytes as the broker sent them. Building and parsing batches is the codec's job
 * (protocol/records).
 */
import type { ApiDescriptor } from '../../protocol/api.js';
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import type { CreateTopicsResponse } from '../../protocol/messages/019-create-topics.gen.js';
import { CreateTopicsApi } from '../../protocol/messages/019-create-topics.gen.js';
import type { DeleteTopicsResponse } from '../../protocol/messages/020-delete-topics.gen.js';
import { DeleteTopicsApi } from '../../protocol/messages/020-delete-topics.gen.js';
import type { FetchRequestFetchTopic, FetchResponse, FetchResponseAbortedTransaction } from '../../protocol/messages/001-fetch.gen.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import type { ListOffsetsResponse } from '../../protocol/messages/002-list-offsets.gen.js';
import { ListOffsetsApi } from '../../protocol/messages/002-list-offsets.gen.js';
import type { MetadataResponse } from '../../protocol/messages/003-metadata.gen.js';
import type { ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { Records } from '../../protocol/wire/writer.js';
import { Cluster } from './cluster.js';
import type { ClusterOptions } from './cluster.js';
import type { Connection } from './connection.js';
import { MetadataError, ProtocolViolationError, throwIfError } from './errors.js';

/** Special ListOffsets timestamps (Kafka's `ListOffsetsRequest.*_TIMESTAMP`). */
export const OffsetSpec = {
  /** The offset of the next record to be written (the log end offset, or LSO under read_committed). */
  LATEST: -1n,
  /** The log start offset. */
  EARLIEST: -2n,
  /** The offset of the record with the highest timestamp (v7+, KIP-734). */
  MAX_TIMESTAMP: -3n,
} as const;

/** Fetch/ListOffsets isolation levels. */
export const IsolationLevel = { READ_UNCOMMITTED: 0, READ_COMMITTED: 1 } as const;

export interface PartitionResult {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
}

export interface ProduceEntry {
  readonly topic: string;
  readonly partition: number;
  /** One or more complete record batches (magic v2), sent as they are: one buffer, or several sent back to back. */
  readonly records: Records;
}

export interface ProduceOptions {
  /** 0, 1 or -1 (all). Default -1. */
  acks?: 0 | 1 | -1;
  /** Broker-side timeout for acks=-1. Default 30 000. */
  timeoutMs?: number;
  transactionalId?: string | null;
  /** Which of a broker's pooled connections to use. Default 0. */
  lane?: number;
}

export interface ProduceResult extends PartitionResult {
  readonly errorMessage: string | null;
  /** Offset given to the first record, or -1 with acks=0. */
  readonly baseOffset: bigint;
  readonly logAppendTimeMs: bigint;
  readonly logStartOffset: bigint;
  /** Per-record errors (KIP-467): index of the record in the batch and its message. */
  readonly recordErrors: ReadonlyArray<{ batchIndex: number; message: string | null }>;
}

export interface FetchEntry {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /** Default 1 MiB (Kafka's `max.partition.fetch.bytes`). */
  readonly maxBytes?: number;
  /** Default -1 (no epoch check). */
  readonly currentLeaderEpoch?: number;
}

export interface FetchOptions {
  /** Default 500 (Kafka's `fetch.max.wait.ms`). */
  maxWaitMs?: number;
  /** Default 1. */
  minBytes?: number;
  /** Default 50 MiB (Kafka's `fetch.max.bytes`). */
  maxBytes?: number;
  isolationLevel?: 0 | 1;
  lane?: number;
}

export interface FetchResult extends PartitionResult {
  readonly highWatermark: bigint;
  readonly lastStableOffset: bigint;
  readonly logStartOffset: bigint;
  readonly abortedTransactions: readonly FetchResponseAbortedTransaction[] | null;
  /** The record set bytes (zero or more batches; the last one may be partial), or null. */
  readonly records: Buffer | null;
}

export interface ListOffsetsEntry {
  readonly topic: string;
  readonly partition: number;
  /** A timestamp in ms, or one of OffsetSpec. */
  readonly timestamp: bigint;
}

export interface ListOffsetsResult extends PartitionResult {
  readonly offset: bigint;
  readonly timestamp: bigint;
  readonly leaderEpoch: number;
}

export interface NewTopic {
  readonly name: string;
  /** -1 for the broker's default. */
  readonly numPartitions: number;
  /** -1 for the broker's default. Default -1. */
  readonly replicationFactor?: number;
  readonly configs?: Readonly<Record<string, string | null>>;
}

export interface CreateTopicResult {
  readonly name: string;
  readonly topicId: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly numPartitions: number;
  readonly replicationFactor: number;
}

export interface DeleteTopicResult {
  readonly name: string | null;
  readonly topicId: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface KafkaClientOptions extends ClusterOptions {}

/** A small Kafka client: a cluster view plus typed helpers. */
export class KafkaClient {
  readonly cluster: Cluster;
  private readonly requestTimeoutMs: number;

  private constructor(cluster: Cluster, options: KafkaClientOptions) {
    this.cluster = cluster;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  }

  /** Connects to the cluster (see ClusterOptions) and loads the broker list. */
  static async connect(options: KafkaClientOptions): Promise<KafkaClient> {
    return new KafkaClient(await Cluster.connect(options), options);
  }

  /** Refreshes the cluster view for `topics` (null = all) and returns the raw Metadata answer. */
  metadata(topics: readonly string[] | null = null, options: { allowAutoTopicCreation?: boolean } = {}): Promise<MetadataResponse> {
    return this.cluster.refreshMetadata(topics, options);
  }

  /**
   * Waits until every partition of each topic has a leader in the Metadata answer, refreshing with a
   * growing backoff. Useful after createTopics, which returns before leaders are elected everywhere.
   */
  async waitForTopics(topics: readonly string[], options: { timeoutMs?: number } = {}): Promise<void> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    let backoff = 20;
    for (;;) {
      const response = await this.cluster.refreshMetadata(topics);
      let pending: string | undefined;
      for (const name of topics) {
        const t = response.topics.find((x) => x.name === name);
        if (!t) pending = `${name}: not in the answer`;
        else if (t.errorCode !== 0) pending = `${name}: ${errorByCode(t.errorCode).name}`;
        else if (t.partitions.length === 0) pending = `${name}: no partitions`;
        else {
          const p = t.partitions.find((x) => x.leaderId < 0 || x.errorCode !== 0);
          if (p) pending = `${name}-${p.partitionIndex}: ${p.errorCode !== 0 ? errorByCode(p.errorCode).name : 'no leader'}`;
        }
        if (pending) break;
      }
      if (!pending) return;
      if (Date.now() + backoff > deadline) throw new MetadataError(`topics not ready: ${pending}`, {});
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, 500);
    }
  }

  /** Creates topics. Per-topic errors (e.g. TOPIC_ALREADY_EXISTS) are in the results. */
  async createTopics(topics: readonly NewTopic[], options: { timeoutMs?: number; validateOnly?: boolean } = {}): Promise<CreateTopicResult[]> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const conn = await this.adminConnection();
    const request = CreateTopicsApi.request.create({
      timeoutMs,
      validateOnly: options.validateOnly ?? false,
      topics: topics.map((t) => ({
        name: t.name,
        numPartitions: t.numPartitions,
        replicationFactor: t.replicationFactor ?? -1,
        assignments: [],
        configs: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
      })),
    });
    const response: CreateTopicsResponse = await conn.request(CreateTopicsApi, request, { timeoutMs: this.requestTimeoutMs + timeoutMs });
    return response.topics.map((t) => ({
      name: t.name,
      topicId: t.topicId,
      errorCode: t.errorCode,
      errorMessage: t.errorMessage,
      numPartitions: t.numPartitions,
      replicationFactor: t.replicationFactor,
    }));
  }

  /** Deletes topics by name. */
  async deleteTopics(names: readonly string[], options: { timeoutMs?: number } = {}): Promise<DeleteTopicResult[]> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const conn = await this.adminConnection();
    const version = conn.versionFor(DeleteTopicsApi);
    // v6 (KIP-516) names topics by name or id in `topics`; earlier versions list names only.
    const request =
      version >= 6
        ? DeleteTopicsApi.request.create({ timeoutMs, topics: names.map((name) => ({ name, topicId: ZERO_UUID })) })
        : DeleteTopicsApi.request.create({ timeoutMs, topicNames: [...names] });
    const response: DeleteTopicsResponse = await conn.request(DeleteTopicsApi, request, { version, timeoutMs: this.requestTimeoutMs + timeoutMs });
    return response.responses.map((r) => ({ name: r.name, topicId: r.topicId, errorCode: r.errorCode, errorMessage: r.errorMessage }));
  }

  /**
   * Produces pre-built record batches. Entries for partitions led by the same broker go in one request.
   * With acks=0 the broker sends no answer: results then carry errorCode 0 and baseOffset -1 once the
   * bytes are written.
   */
  produce(entries: readonly ProduceEntry[], options: ProduceOptions = {}): Promise<ProduceResult[]> {
    return inRounds(entries, (round) => this.produceRound(round, options));
  }

  private async produceRound(entries: readonly ProduceEntry[], options: ProduceOptions): Promise<ProduceResult[]> {
    const acks = options.acks ?? -1;
    const timeoutMs = options.timeoutMs ?? 30_000;
    await this.ensureTopics(entries);
    const groups = this.groupByLeader(entries);
    const results = new Map<string, ProduceResult>();
    await Promise.all(
      [...groups].map(async ([leader, group]) => {
        const conn = await this.cluster.connectionTo(leader, options.lane ?? 0);
        const byTopic = new Map<string, ProduceEntry[]>();
        for (const e of group) push(byTopic, e.topic, e);
        // Produce v13 names topics by id only (KIP-516); this client names them, so it stays at v12.
        const version = conn.versionFor(ProduceApi, { max: 12 });
        const request = ProduceApi.request.create({
          transactionalId: options.transactionalId ?? null,
          acks,
          timeoutMs,
          topicData: [...byTopic].map(([name, es]) => ({ name, topicId: ZERO_UUID, partitionData: es.map((e) => ({ index: e.partition, records: e.records })) })),
        });
        if (acks === 0) {
          await conn.send(ProduceApi, request, { version });
          for (const e of group) results.set(key(e.topic, e.partition), acksZeroResult(e));
          return;
        }
        const response: ProduceResponse = await conn.request(ProduceApi, request, { version, timeoutMs: this.requestTimeoutMs + timeoutMs });
        for (const t of response.responses) {
          for (const p of t.partitionResponses) {
            results.set(key(t.name, p.index), {
              topic: t.name,
              partition: p.index,
              errorCode: p.errorCode,
              errorMessage: p.errorMessage,
              baseOffset: p.baseOffset,
              logAppendTimeMs: p.logAppendTimeMs,
              logStartOffset: p.logStartOffset,
              recordErrors: p.recordErrors.map((r) => ({ batchIndex: r.batchIndex, message: r.batchIndexErrorMessage })),
            });
          }
        }
      }),
    );
    return entries.map((e) => results.get(key(e.topic, e.partition)) ?? missing(ProduceApi, e));
  }

  /** Fetches from partitions without a fetch session (session id 0, epoch -1: a full, sessionless fetch). */
  fetch(entries: readonly FetchEntry[], options: FetchOptions = {}): Promise<FetchResult[]> {
    return inRounds(entries, (round) => this.fetchRound(round, options));
  }

  private async fetchRound(entries: readonly FetchEntry[], options: FetchOptions): Promise<FetchResult[]> {
    const maxWaitMs = options.maxWaitMs ?? 500;
    await this.ensureTopics(entries);
    const groups = this.groupByLeader(entries);
    const results = new Map<string, FetchResult>();
    await Promise.all(
      [...groups].map(async ([leader, group]) => {
        const conn = await this.cluster.connectionTo(leader, options.lane ?? 0);
        // Fetch v13+ names topics by id (KIP-516); stay below it when the view has no ids.
        const ids = group.every((e) => (this.cluster.topic(e.topic)?.topicId ?? ZERO_UUID) !== ZERO_UUID);
        const version = conn.versionFor(FetchApi, ids ? undefined : { max: 12 });
        const byTopic = new Map<string, FetchEntry[]>();
        for (const e of group) push(byTopic, e.topic, e);
        const topics: FetchRequestFetchTopic[] = [...byTopic].map(([name, es]) => ({
          topic: name,
          topicId: this.cluster.topic(name)?.topicId ?? ZERO_UUID,
          partitions: es.map((e) => ({
            partition: e.partition,
            currentLeaderEpoch: e.currentLeaderEpoch ?? -1,
            fetchOffset: e.offset,
            lastFetchedEpoch: -1,
            logStartOffset: -1n,
            partitionMaxBytes: e.maxBytes ?? 1024 * 1024,
            replicaDirectoryId: ZERO_UUID,
            highWatermark: 9223372036854775807n, // Fetch v18: Long.MAX, "not supported", as a consumer sends it (KIP-1166: only followers report one)
          })),
        }));
        const request = FetchApi.request.create({
          maxWaitMs,
          minBytes: options.minBytes ?? 1,
          maxBytes: options.maxBytes ?? 50 * 1024 * 1024,
          isolationLevel: options.isolationLevel ?? 0,
          sessionId: 0,
          sessionEpoch: -1,
          topics,
        });
        const response: FetchResponse = await conn.request(FetchApi, request, { version, timeoutMs: this.requestTimeoutMs + maxWaitMs });
        throwIfError(response.errorCode, { broker: conn.address, nodeId: leader, apiName: 'Fetch', apiVersion: version });
        for (const t of response.responses) {
          const name = version >= 13 ? this.cluster.topicNameById(t.topicId) : t.topic;
          if (name === undefined) {
            throw new ProtocolViolationError(`Fetch answer names topic id ${t.topicId}, which was not asked for`, { broker: conn.address, apiName: 'Fetch', apiVersion: version });
          }
          for (const p of t.partitions) {
            results.set(key(name, p.partitionIndex), {
              topic: name,
              partition: p.partitionIndex,
              errorCode: p.errorCode,
              highWatermark: p.highWatermark,
              lastStableOffset: p.lastStableOffset,
              logStartOffset: p.logStartOffset,
              abortedTransactions: p.abortedTransactions,
              records: asBuffer(p.records),
            });
          }
        }
      }),
    );
    return entries.map((e) => results.get(key(e.topic, e.partition)) ?? missing(FetchApi, e));
  }

  /** Looks up offsets by timestamp (or OffsetSpec) on each partition's leader. */
  listOffsets(entries: readonly ListOffsetsEntry[], options: { isolationLevel?: 0 | 1 } = {}): Promise<ListOffsetsResult[]> {
    return inRounds(entries, (round) => this.listOffsetsRound(round, options));
  }

  private async listOffsetsRound(entries: readonly ListOffsetsEntry[], options: { isolationLevel?: 0 | 1 }): Promise<ListOffsetsResult[]> {
    await this.ensureTopics(entries);
    const groups = this.groupByLeader(entries);
    const results = new Map<string, ListOffsetsResult>();
    await Promise.all(
      [...groups].map(async ([leader, group]) => {
        const conn = await this.cluster.connectionTo(leader);
        // MAX_TIMESTAMP needs v7 (KIP-734).
        const needs = group.some((e) => e.timestamp === OffsetSpec.MAX_TIMESTAMP) ? 7 : 0;
        const version = conn.versionFor(ListOffsetsApi, { min: needs });
        const byTopic = new Map<string, ListOffsetsEntry[]>();
        for (const e of group) push(byTopic, e.topic, e);
        const request = ListOffsetsApi.request.create({
          replicaId: -1,
          isolationLevel: options.isolationLevel ?? 0,
          topics: [...byTopic].map(([name, es]) => ({
            name,
            partitions: es.map((e) => ({ partitionIndex: e.partition, currentLeaderEpoch: -1, timestamp: e.timestamp, maxNumOffsets: 1 })),
          })),
        });
        const response: ListOffsetsResponse = await conn.request(ListOffsetsApi, request, { version });
        for (const t of response.topics) {
          for (const p of t.partitions) {
            results.set(key(t.name, p.partitionIndex), {
              topic: t.name,
              partition: p.partitionIndex,
              errorCode: p.errorCode,
              // v0 answers with a list of offsets instead of one offset.
              offset: version === 0 ? (p.oldStyleOffsets[0] ?? -1n) : p.offset,
              timestamp: p.timestamp,
              leaderEpoch: p.leaderEpoch,
            });
          }
        }
      }),
    );
    return entries.map((e) => results.get(key(e.topic, e.partition)) ?? missing(ListOffsetsApi, e));
  }

  /** Closes every connection. */
  close(): Promise<void> {
    return this.cluster.close();
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * The connection for admin requests: the controller id the last Metadata answer named when it is a known
   * broker (with KRaft, a broker that forwards to the active controller), else any broker.
   */
  private adminConnection(): Promise<Connection> {
    const controller = this.cluster.controllerId;
    return controller >= 0 && this.cluster.brokers.has(controller) ? this.cluster.connectionTo(controller) : this.cluster.anyConnection();
  }

  /** Loads metadata for topics the view does not know yet. */
  private async ensureTopics(entries: ReadonlyArray<{ topic: string }>): Promise<void> {
    const missingTopics = [...new Set(entries.map((e) => e.topic))].filter((t) => !this.cluster.topic(t));
    if (missingTopics.length > 0) await this.cluster.refreshMetadata(missingTopics);
  }

  private groupByLeader<E extends { topic: string; partition: number }>(entries: readonly E[]): Map<number, E[]> {
    const groups = new Map<number, E[]>();
    for (const e of entries) push(groups, this.cluster.leaderFor(e.topic, e.partition), e);
    return groups;
  }
}

/**
 * Runs `run` over rounds in which each partition appears at most once (Kafka answers INVALID_REQUEST to a
 * ListOffsets naming a partition twice, and a response has one entry per partition), one round after the
 * other so that repeated produces to a partition keep their order. Results come back in entry order.
 */
async function inRounds<E extends { topic: string; partition: number }, R>(entries: readonly E[], run: (round: E[]) => Promise<R[]>): Promise<R[]> {
  const rounds: Array<{ at: number[]; entries: E[] }> = [];
  const seen = new Map<string, number>();
  entries.forEach((e, i) => {
    const k = key(e.topic, e.partition);
    const n = seen.get(k) ?? 0;
    seen.set(k, n + 1);
    const round = (rounds[n] ??= { at: [], entries: [] });
    round.at.push(i);
    round.entries.push(e);
  });
  if (rounds.length <= 1) return run([...entries]);
  const out = new Array<R>(entries.length);
  for (const round of rounds) {
    const results = await run(round.entries);
    round.at.forEach((i, j) => (out[i] = results[j]!));
  }
  return out;
}

/** Decoded record sets are single buffers; the codec's type also allows the list form encoders take. */
function asBuffer(records: Records | null): Buffer | null {
  if (records === null || Buffer.isBuffer(records)) return records;
  return Buffer.concat(records as readonly Buffer[]);
}

function key(topic: string, partition: number): string {
  return `${partition}\u0000${topic}`;
}

function push<K, V>(map: Map<K, V[]>, k: K, v: V): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

function acksZeroResult(e: ProduceEntry): ProduceResult {
  return { topic: e.topic, partition: e.partition, errorCode: ErrorCode.NONE, errorMessage: null, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n, recordErrors: [] };
}

/** A partition that was asked for but is absent from the broker's answer. */
function missing(api: ApiDescriptor, e: { topic: string; partition: number }): never {
  throw new ProtocolViolationError(`${api.name} answer lacks a partition that was asked for`, { apiName: api.name, topic: e.topic, partition: e.partition });
}
