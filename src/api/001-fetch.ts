// Fetch v4-18 (v0-3 removed by Kafka 4) · v4: isolation level, last stable offset, aborted transactions
// · v5: logStartOffset · v7: fetch sessions (KIP-227) · v9: currentLeaderEpoch (KIP-320) · v11: rackId
// · v12+: flexible, lastFetchedEpoch, diverging epoch · v13: topic ids (KIP-516) · v15: replicaState
// · v16: nodeEndpoints · v17: replicaDirectoryId · v18: a follower's high watermark per partition
// (KIP-1166); consumers send Long.MAX ("not supported") and, as Kafka's leader does for a non-replica,
// it is not read.
//
// Authorization, as KafkaApis.handleFetchRequest: a follower's fetch (a replica id ≥ 0) needs CLUSTER_ACTION on
// the cluster, a consumer's READ on each topic; a partition not allowed is answered TOPIC_AUTHORIZATION_FAILED
// before its existence is looked at, and does not cut a long poll short.
//
// Returns stored batches as they are (no decompression, no re-encoding). Long-polls up to maxWaitMs for
// minBytes, waking on appends rather than polling. At least one batch is returned for the first partition
// with data even when it exceeds the byte limits (KIP-74).
//
// In a fetch session (KIP-227) only the partitions that may have something new are read: a caught-up partition
// whose log has not changed since its last read answered nothing is skipped, as Kafka's incremental response
// would drop it (src/cluster/fetch-sessions.ts), and the session wakes a long poll. A consumer of thousands of
// mostly idle partitions so costs each fetch the partitions that moved, not all of them.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  FetchApi,
  createFetchResponse,
  createFetchResponseFetchableTopicResponse,
  createFetchResponseNodeEndpoint,
  createFetchResponseAbortedTransaction,
  createFetchResponsePartitionData,
  type FetchRequest,
  type FetchResponseFetchableTopicResponse,
  type FetchResponsePartitionData,
} from '../../protocol/messages/001-fetch.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { partitionKey, type FetchPartition, type FetchRequestPartitionView, type FetchSessionReads } from '../cluster/fetch-sessions.js';
import { LogError } from '../log/errors.js';
import type { IsolationLevel, PartitionLog, ReadResult } from '../log/partition-log.js';
import { leaderEpochError, logErrorCode } from './partition-errors.js';
import { ELEMENTS_IN_FLIGHT } from './bounded-map.js';
import { defineHandler, type RequestContext } from './handler.js';
import { openOwned, servedPartition } from './served-partition.js';
import type { PartitionService } from './services.js';
import { AclOperation, ResourceType } from './access.js';

type FetchContext = RequestContext<'node' | 'topics' | 'cluster' | 'partitions' | 'fetchSessions' | 'metrics'>;

const READ_COMMITTED = 1;
const NO_RECORDS = Buffer.alloc(0);

interface PartitionRead {
  fetch: FetchPartition;
  key: string;
  errorCode: number;
  result: ReadResult | null;
}


function resolveRequest(req: FetchRequest, ctx: FetchContext): { requested: FetchRequestPartitionView[]; forgotten: string[]; unknownTopicIds: Map<string, number[]> } {
  const { topics } = ctx.services;
  const byId = ctx.apiVersion >= 13;
  const requested: FetchRequestPartitionView[] = [];
  const unknownTopicIds = new Map<string, number[]>();
  for (const t of req.topics) {
    const topic = byId ? topics.getById(t.topicId) : topics.get(t.topic);
    if (byId && !topic) {
      unknownTopicIds.set(t.topicId, t.partitions.map((p) => p.partition));
      continue;
    }
    const name = topic?.name ?? t.topic;
    const topicId = topic?.topicId ?? ZERO_UUID;
    for (const p of t.partitions) {
      requested.push({
        key: partitionKey(byId ? topicId : name, p.partition),
        fetch: {
          topic: name,
          topicId,
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          partitionMaxBytes: p.partitionMaxBytes,
          currentLeaderEpoch: ctx.apiVersion >= 9 ? p.currentLeaderEpoch : -1,
          logStartOffset: p.logStartOffset,
        },
      });
    }
  }
  const forgotten: string[] = [];
  for (const t of req.forgottenTopicsData) for (const p of t.partitions) forgotten.push(partitionKey(byId ? t.topicId : t.topic, p));
  return { requested, forgotten, unknownTopicIds };
}

/** Told of each partition readAll read (with the log's state version before the read), or answered an error for. */
interface ReadObserver {
  read(f: FetchPartition, log: PartitionLog, versionBefore: number, result: ReadResult): void;
  failed(f: FetchPartition): void;
}

/** How a partition's read ended. */
type ReadOutcome = { readonly result: ReadResult } | { readonly error: unknown };

/** A partition of a read group: answered already (an error), or read (in flight, or at once when caught up). */
type GroupEntry =
  | { readonly fetch: FetchPartition; readonly key: string; readonly errorCode: number }
  | {
      readonly fetch: FetchPartition;
      readonly key: string;
      readonly log: PartitionLog;
      readonly versionBefore: number;
      /** The byte limit and KIP-74 flag the read was made with. */
      readonly limit: number;
      readonly minOneBatch: boolean;
      readonly outcome: ReadOutcome | Promise<ReadOutcome>;
    };

/**
 * Reads the partitions in order, as Kafka's ReplicaManager.readFromLocalLog does: each gets the smaller of its
 * partitionMaxBytes and what the fetch's maxBytes has left, and only the first partition with data may exceed
 * its limit with one whole batch (KIP-74).
 *
 * The reads of a group of partitions run at once: a partition read from the disk then costs its fetch one wait,
 * not a wait per partition (sequential reads of 4 partitions took a catch-up consumer's fetch 17-21 ms). A group
 * takes partitions while the sum of their partitionMaxBytes fits in what the fetch has left, so each is read
 * with the limit it would have had in turn. The results are then taken in order against the real budget; a
 * partition whose limit or KIP-74 flag turns out other than it was read with (a batch larger than its limit
 * came before it) is read again, alone, with the right ones.
 */
async function readAll(
  services: FetchContext['services'],
  parts: FetchPartition[],
  keys: string[],
  maxBytes: number,
  isolation: IsolationLevel,
  readable: (topic: string) => boolean,
  observer?: ReadObserver,
): Promise<PartitionRead[]> {
  let budget = maxBytes;
  let gotData = false;
  const out: PartitionRead[] = [];
  const read = (log: PartitionLog, f: FetchPartition, limit: number, minOneBatch: boolean): ReadOutcome | Promise<ReadOutcome> => {
    try {
      if (limit <= 0 && !minOneBatch) return { result: emptyRead(log) };
      const offset = Number(f.fetchOffset);
      // Most partitions of a large fetch are caught up: their answer needs no read and no promise.
      const atEnd = log.readAtEnd(offset, isolation);
      if (atEnd) return { result: atEnd };
      return log.read(offset, { maxBytes: Math.max(limit, 0), isolation, minOneBatch }).then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
    } catch (error) {
      return { error };
    }
  };
  let i = 0;
  while (i < parts.length) {
    const group: GroupEntry[] = [];
    let reserved = 0;
    let reads = 0;
    for (; i < parts.length && reads < ELEMENTS_IN_FLIGHT; i++) {
      const fetch = parts[i]!;
      const key = keys[i]!;
      if (!readable(fetch.topic)) {
        group.push({ fetch, key, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
        continue;
      }
      let served = servedPartition(services, fetch.topic, fetch.partition);
      if (served instanceof Promise) served = await served;
      if (typeof served === 'number') {
        group.push({ fetch, key, errorCode: served });
        continue;
      }
      const log = served.log;
      const epochError = leaderEpochError(fetch.currentLeaderEpoch, log.leaderEpoch);
      if (epochError !== ErrorCode.NONE) {
        group.push({ fetch, key, errorCode: epochError });
        continue;
      }
      const wanted = Math.max(fetch.partitionMaxBytes, 0);
      // After the group's first read, only a partition whose whole limit still fits joins it.
      if (reads > 0 && wanted > budget - reserved) break;
      const limit = Math.min(fetch.partitionMaxBytes, budget - reserved);
      const minOneBatch = !gotData;
      reserved += Math.max(limit, 0);
      reads++;
      const versionBefore = log.stateVersion;
      group.push({ fetch, key, log, versionBefore, limit, minOneBatch, outcome: read(log, fetch, limit, minOneBatch) });
    }
    for (const e of group) {
      if (!('log' in e)) {
        observer?.failed(e.fetch);
        out.push({ fetch: e.fetch, key: e.key, errorCode: e.errorCode, result: null });
        continue;
      }
      const limit = Math.min(e.fetch.partitionMaxBytes, budget);
      const minOneBatch = !gotData;
      let settled = e.outcome instanceof Promise ? await e.outcome : e.outcome;
      if ('result' in settled) {
        const sameRead = limit === e.limit && (minOneBatch === e.minOneBatch || settled.result.sizeInBytes <= limit);
        if (!sameRead) settled = await read(e.log, e.fetch, limit, minOneBatch);
      }
      if ('error' in settled) {
        if (!(settled.error instanceof LogError)) throw settled.error;
        observer?.failed(e.fetch);
        out.push({ fetch: e.fetch, key: e.key, errorCode: logErrorCode(settled.error), result: null });
        continue;
      }
      const result = settled.result;
      budget -= result.sizeInBytes;
      if (result.sizeInBytes > 0) gotData = true;
      observer?.read(e.fetch, e.log, e.versionBefore, result);
      out.push({ fetch: e.fetch, key: e.key, errorCode: ErrorCode.NONE, result });
    }
  }
  return out;
}

function emptyRead(log: { highWatermark: number; lastStableOffset: number; logStartOffset: number }): ReadResult {
  return { records: [], sizeInBytes: 0, highWatermark: log.highWatermark, lastStableOffset: log.lastStableOffset, logStartOffset: log.logStartOffset, nextOffset: 0, abortedTransactions: [] };
}

function totalBytes(reads: PartitionRead[]): number {
  let n = 0;
  for (const r of reads) n += r.result?.sizeInBytes ?? 0;
  return n;
}

/**
 * Where each partition's next data would start: after what the last read returned, for partitions that
 * are caught up (nothing readable past it). A partition whose read stopped at its byte limit is left out:
 * waiting cannot give this fetch more of it (Kafka's DelayedFetch counts bytes up to the same limits), and
 * waiting on data that is already there would wake at once, over and over.
 */
function waitPositions(reads: PartitionRead[], isolation: IsolationLevel): { fetch: FetchPartition; offset: number }[] {
  const out: { fetch: FetchPartition; offset: number }[] = [];
  for (const r of reads) {
    if (r.errorCode !== ErrorCode.NONE || !r.result) continue;
    const offset = positionAfter(r.fetch, r.result);
    if (caughtUp(offset, r.result, isolation)) out.push({ fetch: r.fetch, offset });
  }
  return out;
}

/** Where a partition's next read starts after `result`. */
function positionAfter(f: FetchPartition, result: ReadResult): number {
  return result.records.length > 0 ? result.nextOffset : Number(f.fetchOffset);
}

function caughtUp(position: number, result: ReadResult, isolation: IsolationLevel): boolean {
  // read_committed reads stop at the last stable offset: caught up there, it waits for a marker to move it.
  return position >= (isolation === 'read_committed' ? result.lastStableOffset : result.highWatermark);
}

/**
 * Waits until one of the partitions gets data past its position, the deadline passes or the client goes.
 * One timer and one abort listener for the whole wait, however many partitions it covers: each partition
 * gets a plain callback (PartitionLog.onData), not a listener on a shared AbortSignal, so a long-poll of
 * hundreds of partitions stays under Node's MaxListeners limit of 10 per signal.
 */
function waitForAny(
  partitions: PartitionService,
  positions: { fetch: FetchPartition; offset: number }[],
  isolation: IsolationLevel,
  deadline: number,
  signal: AbortSignal,
): Promise<void> {
  const remaining = deadline - Date.now();
  if (remaining <= 0 || signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const cancels: (() => void)[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      for (const c of cancels) c();
      resolve();
    };
    const timer = setTimeout(finish, remaining);
    signal.addEventListener('abort', finish, { once: true });
    for (const { fetch: f, offset } of positions) {
      if (done) break;
      const part = partitions.get(f.topic, f.partition);
      if (part) cancels.push(part.log.onData(offset, finish, isolation));
    }
  });
}

/** Whether a partition's answer ends a long poll: any error but an authorization failure (KafkaApis). */
function endsWait(r: PartitionRead): boolean {
  return r.errorCode !== ErrorCode.NONE && r.errorCode !== ErrorCode.TOPIC_AUTHORIZATION_FAILED;
}

function readableTopics(ctx: FetchContext, fromFollower: boolean, topics: string[]): (topic: string) => boolean {
  if (fromFollower) {
    const allowed = ctx.access.authorizeCluster(AclOperation.CLUSTER_ACTION);
    return () => allowed;
  }
  const allowed = ctx.access.allowedNames(AclOperation.READ, ResourceType.TOPIC, topics);
  return (topic) => allowed.has(topic);
}

/**
 * A sessionless fetch (before v7, or epoch -1): reads every partition it lists, and reads them all again
 * each time one of the caught-up ones gets data, until minBytes, the deadline or an error.
 */
async function readListed(ctx: FetchContext, parts: FetchPartition[], keys: string[], req: FetchRequest, isolation: IsolationLevel, deadline: number, fromFollower: boolean): Promise<PartitionRead[]> {
  const readable = readableTopics(ctx, fromFollower, parts.map((f) => f.topic));
  const opening = openOwned(ctx.services, parts.filter((f) => readable(f.topic)));
  if (opening) await opening;
  let reads = await readAll(ctx.services, parts, keys, req.maxBytes, isolation, readable);
  while (totalBytes(reads) < req.minBytes && !reads.some(endsWait) && Date.now() < deadline && !ctx.signal.aborted) {
    await waitForAny(ctx.services.partitions, waitPositions(reads, isolation), isolation, deadline, ctx.signal);
    reads = await readAll(ctx.services, parts, keys, req.maxBytes, isolation, readable);
  }
  return reads;
}

/**
 * A fetch in a session (KIP-227): reads the partitions that are not quiet (src/cluster/fetch-sessions.ts), and
 * after each change the session is woken by, those again. A partition's latest read stands for it; a quiet one
 * read in an earlier round keeps that round's answer (an incremental response drops it unless it changed).
 */
async function readSession(ctx: FetchContext, s: FetchSessionReads, req: FetchRequest, isolation: IsolationLevel, deadline: number, fromFollower: boolean): Promise<PartitionRead[]> {
  const { cluster } = ctx.services;
  const readable = readableTopics(ctx, fromFollower, s.topicNames());
  // A quiet partition is skipped only while the broker still serves it: losing it is answered at once.
  const serves = (f: FetchPartition): boolean => readable(f.topic) && cluster.owns(f.topic, f.partition);
  let changedDuringRead = false;
  const observer: ReadObserver = {
    read(f, log, versionBefore, result) {
      const upToDate = caughtUp(positionAfter(f, result), result, isolation);
      if (s.settle(f, log, versionBefore, isolation, upToDate, upToDate && result.records.length === 0)) changedDuringRead = true;
    },
    failed: (f) => s.unsettle(f),
  };
  const latest = new Map<FetchPartition, PartitionRead>();
  for (;;) {
    const since = s.changes;
    changedDuringRead = false;
    const { partitions, keys } = s.toRead(isolation, serves);
    const opening = openOwned(ctx.services, partitions.filter((f) => readable(f.topic)));
    if (opening) await opening;
    for (const r of await readAll(ctx.services, partitions, keys, req.maxBytes, isolation, readable, observer)) latest.set(r.fetch, r);
    const reads = [...latest.values()];
    if (totalBytes(reads) >= req.minBytes || reads.some(endsWait) || Date.now() >= deadline || ctx.signal.aborted || s.closed) return reads;
    if (!changedDuringRead) await s.waitForChange(since, deadline, ctx.signal);
  }
}

export const fetch = defineHandler({
  api: FetchApi,
  uses: ['node', 'topics', 'cluster', 'partitions', 'fetchSessions', 'metrics'],
  versions: { min: 4, max: 18 },
  async handle(req, ctx) {
    const { node, cluster, partitions, fetchSessions, metrics } = ctx.services;
    const leaders = new Set<number>();
    const v = ctx.apiVersion;
    const isolation: IsolationLevel = req.isolationLevel === READ_COMMITTED ? 'read_committed' : 'read_uncommitted';
    const { requested, forgotten, unknownTopicIds } = resolveRequest(req, ctx);
    const session =
      v >= 7
        ? fetchSessions.begin(req.sessionId, req.sessionEpoch, requested, forgotten)
        : { errorCode: ErrorCode.NONE, sessionId: 0, session: null, partitions: requested.map((r) => r.fetch), keys: requested.map((r) => r.key), incremental: false };
    if (session.errorCode !== ErrorCode.NONE) return createFetchResponse({ errorCode: session.errorCode, sessionId: 0, responses: [] });

    const deadline = Date.now() + Math.max(0, req.maxWaitMs);
    const fromFollower = (v >= 15 ? req.replicaState.replicaId : req.replicaId) >= 0;
    const reads = session.session
      ? await readSession(ctx, session.session, req, isolation, deadline, fromFollower)
      : await readListed(ctx, session.partitions, session.keys, req, isolation, deadline, fromFollower);

    const include = v >= 7
      ? fetchSessions.complete(
          session.sessionId,
          session.incremental,
          reads.map((r) => ({
            key: r.key,
            fetch: r.fetch,
            hasRecords: (r.result?.sizeInBytes ?? 0) > 0,
            errorCode: r.errorCode,
            highWatermark: r.result?.highWatermark ?? -1,
            lastStableOffset: r.result?.lastStableOffset ?? -1,
            logStartOffset: r.result?.logStartOffset ?? -1,
          })),
        )
      : reads.map(() => true);

    const topics = new Map<string, FetchResponseFetchableTopicResponse>();
    const topicEntry = (name: string, topicId: string): FetchResponseFetchableTopicResponse => {
      const k = v >= 13 ? topicId : name;
      let t = topics.get(k);
      if (!t) topics.set(k, (t = createFetchResponseFetchableTopicResponse({ topic: v >= 13 ? '' : name, topicId: v >= 13 ? topicId : ZERO_UUID })));
      return t;
    };
    reads.forEach((r, i) => {
      if (!include[i]) return;
      const res = r.result;
      const pd: FetchResponsePartitionData = createFetchResponsePartitionData({
        partitionIndex: r.fetch.partition,
        errorCode: r.errorCode,
        highWatermark: BigInt(res?.highWatermark ?? -1),
        lastStableOffset: BigInt(res?.lastStableOffset ?? -1),
        logStartOffset: BigInt(res?.logStartOffset ?? -1),
        // KIP-98: the aborted transactions overlapping the records returned, so the consumer drops them.
        abortedTransactions:
          isolation === 'read_committed'
            ? (res?.abortedTransactions ?? []).map((a) => createFetchResponseAbortedTransaction({ producerId: a.producerId, firstOffset: BigInt(a.firstOffset) }))
            : null,
        preferredReadReplica: -1,
        // Kafka always sends a record set, empty when there is nothing: librdkafka refuses a null one
        // ("invalid MessageSetSize -1").
        records: res && res.records.length > 0 ? res.records : NO_RECORDS,
      });
      if (r.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE || r.errorCode === ErrorCode.NONE) {
        const part = partitions.get(r.fetch.topic, r.fetch.partition);
        if (part && !res) {
          pd.highWatermark = BigInt(part.log.highWatermark);
          pd.lastStableOffset = BigInt(part.log.lastStableOffset);
          pd.logStartOffset = BigInt(part.log.logStartOffset);
        }
      }
      if (v >= 12 && (r.errorCode === ErrorCode.FENCED_LEADER_EPOCH || r.errorCode === ErrorCode.UNKNOWN_LEADER_EPOCH)) {
        pd.currentLeader = { leaderId: node.nodeId, leaderEpoch: partitions.leaderEpoch(r.fetch.topic, r.fetch.partition) };
      } else if (v >= 12 && r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER) {
        // KIP-951: the leader this broker knows of, so the client goes there without a metadata round trip.
        const owner = cluster.owner(r.fetch.topic, r.fetch.partition);
        pd.currentLeader = { leaderId: owner, leaderEpoch: owner >= 0 ? (cluster.announcedLeaderEpoch?.(r.fetch.topic, r.fetch.partition) ?? -1) : -1 };
        if (owner >= 0) leaders.add(owner);
      }
      if (res && res.sizeInBytes > 0) metrics.countFetch(r.fetch.topic, res.sizeInBytes);
      topicEntry(r.fetch.topic, r.fetch.topicId).partitions.push(pd);
    });
    for (const [topicId, partitions] of unknownTopicIds) {
      const t = topicEntry('', topicId);
      for (const p of partitions) t.partitions.push(createFetchResponsePartitionData({ partitionIndex: p, errorCode: ErrorCode.UNKNOWN_TOPIC_ID, highWatermark: -1n, lastStableOffset: -1n, logStartOffset: -1n, records: NO_RECORDS }));
    }
    // v16+: the endpoints of the leaders named in currentLeader (KIP-951), on the listener this client uses.
    const nodeEndpoints = [];
    for (const id of leaders) {
      const b = cluster.broker(id);
      const e = b?.endpoints.find((x) => x.listenerName === ctx.connection.listenerName) ?? b?.endpoints[0];
      if (b && e) nodeEndpoints.push(createFetchResponseNodeEndpoint({ nodeId: id, host: e.host, port: e.port, rack: b.rack }));
    }
    return createFetchResponse({ errorCode: ErrorCode.NONE, sessionId: session.sessionId, responses: [...topics.values()], nodeEndpoints: v >= 16 ? nodeEndpoints : [] });
  },
});
