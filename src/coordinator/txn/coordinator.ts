/**
 * The transaction coordinator of this broker (Kafka's TransactionCoordinator over TransactionStateManager,
 * KIP-98, KIP-360, KIP-447, KIP-890 parts 1 and 2: transaction versions 1 and 2): routes a transactional id to
 * its __transaction_state partition, runs InitProducerId / AddPartitionsToTxn / AddOffsetsToTxn / EndTxn against
 * the id's state (state.ts), makes each change durable before answering, and completes transactions by writing
 * their markers (markers.ts) before their Complete* state.
 *
 * ```
 *   handler ─► TransactionCoordinator ─► shard(partitionFor(id)) ─► TransactionMetadata (memory)
 *                     │                        └─► CoordinatorStorage ─► __transaction_state-<p> log
 *                     └─► TxnCompletion: markers ─► TxnMarkerSink (partition logs, __consumer_offsets)
 * ```
 *
 * A shard exists only for a partition this broker owns (`ownership`, the cluster view; NOT_COORDINATOR
 * otherwise), is loaded on the first request for an id it holds (which waits for it up to LAZY_LOAD_WAIT_MS,
 * then answers COORDINATOR_LOAD_IN_PROGRESS), and closes when the view releases the partition.
 */
import { ErrorCode } from '../../../protocol/error-codes.js';
import { coordinatorPartition } from '../../cluster/cluster-view.js';
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../../cluster/topic-names.js';
import { systemClock, type Clock } from '../../metadata/clock.js';
import { InternalTopicStarter, internalTopicReplicas } from '../internal-topic.js';
import { SILENT_LOGGER, type CoordinatorLogger, type TopicView } from '../context.js';
import type { TopicCreator, TopicEventSource } from '../coordinator.js';
import { errorCodeOf } from '../errors.js';
import { LAZY_LOAD_WAIT_MS } from '../shard-set.js';
import { exceedsInt16String } from '../string-bounds.js';
import type { CoordinatorPartitionLog } from '../storage.js';
import type { TransactionCoordinatorConfig } from './config.js';
import { decideEndTxnV2, endTxnV2Answer, endTxnV2Transit, type EndTxnResult } from './end-txn-v2.js';
import { javaPatternToRegExp } from './java-pattern.js';
import { TxnCompletion } from './markers.js';
import { encodeTxnRecord } from './records.js';
import { TxnShard } from './shard.js';
import {
  isEpochExhausted,
  NO_PRODUCER_EPOCH,
  supportsEpochBump,
  TV_0,
  TV_2,
  NO_PRODUCER_ID,
  TransactionMetadata,
  TxnState,
  txnStateFromName,
  txnStateName,
  unionPartitions,
  type TxnValue,
} from './state.js';
import type { TxnMarkerSink } from './types.js';

export interface TopicPartitionRef {
  readonly topic: string;
  readonly partition: number;
}

export interface PartitionError {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
}

export interface InitProducerIdResult {
  readonly errorCode: number;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export interface DescribedTransaction {
  readonly transactionalId: string;
  readonly errorCode: number;
  readonly state: string;
  readonly timeoutMs: number;
  readonly startTimeMs: number;
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly partitions: ReadonlyArray<{ topic: string; partitions: number[] }>;
}

export interface ListTransactionsFilters {
  readonly states: readonly string[];
  readonly producerIds: readonly bigint[];
  /** Only transactions running longer than this (ms); -1: no filter (ListTransactions v1). */
  readonly durationMs: number;
  /** Only ids this regular expression matches in full (ListTransactions v2, KIP-1152); null: no filter. */
  readonly transactionalIdPattern: string | null;
}

export interface ListTransactionsResult {
  readonly errorCode: number;
  readonly unknownStateFilters: string[];
  readonly transactions: Array<{ transactionalId: string; producerId: bigint; state: string }>;
}

export interface TransactionCoordinatorOptions {
  readonly config: TransactionCoordinatorConfig;
  readonly topics: TopicView & Partial<TopicEventSource> & Partial<TopicCreator>;
  readonly openLog: (partition: number) => Promise<CoordinatorPartitionLog>;
  /** New producer ids (src/cluster/producer-state.ts). */
  readonly producerIds: { allocate(): Promise<bigint> };
  /** Where markers go (src/cluster/txn-markers.ts LocalTxnMarkerWriter). */
  readonly markers: TxnMarkerSink;
  /** The __consumer_offsets partition of a group (AddOffsetsToTxn). */
  readonly groupPartitionFor: (groupId: string) => number;
  /** Whether this broker owns a __transaction_state partition (the cluster view). Default: all. */
  readonly ownership?: { owns(partition: number): boolean };
  /** The coordinator epoch of a loaded partition (its leader epoch). Default 0. */
  readonly coordinatorEpoch?: (partition: number) => number;
  /** Live brokers, to cap the topic's replication factor when it is created. Default 1. */
  readonly liveBrokers?: () => number;
  /**
   * A member of a shared cluster: __transaction_state is created only once transaction.state.log.replication.factor
   * brokers are live, as Kafka's is (../internal-topic.ts); until then requests answer COORDINATOR_NOT_AVAILABLE.
   */
  readonly awaitReplicas?: boolean;
  readonly clock?: Clock;
  readonly logger?: CoordinatorLogger;
}

const { NONE } = ErrorCode;

/**
 * How long EndTxn, its Prepare* durable, waits for the transaction to complete (markers written, Complete*
 * durable) before it answers. Kafka answers at once; a producer that begins its next transaction straight away
 * then meets CONCURRENT_TRANSACTIONS from AddPartitionsToTxn while the markers are being written, and sleeps
 * 20 ms before it asks again (its backoff for that error, KAFKA-5477). Here the markers and the Complete* state
 * are each fsynced, so a producer asking at once nearly always found the previous transaction still
 * completing (transactions-100 in bench/BASELINE.md: one such retry per transaction, 23 ms each). Waiting here
 * at most those 20 ms answers the same NONE no later than the producer's retry would have gone through, and a
 * transaction whose markers cannot be written yet is answered after the wait, as before.
 */
export const END_TXN_COMPLETION_WAIT_MS = 20;

/** Resolves when `work` settles or after `ms`, whichever comes first; the timer does not keep the process alive. */
function settledWithin(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([work, elapsed]).finally(() => clearTimeout(timer));
}

export class TransactionCoordinator {
  readonly config: TransactionCoordinatorConfig;
  private readonly clock: Clock;
  private readonly log: CoordinatorLogger;
  private shards: (TxnShard | undefined)[] = [];
  private count = 0;
  private accepting = false;
  private stopped = false;
  /** Starts taking requests once __transaction_state exists (created here when it may be). */
  private starter: InternalTopicStarter | null = null;
  private readonly completion: TxnCompletion;

  constructor(private readonly options: TransactionCoordinatorOptions) {
    this.config = options.config;
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? SILENT_LOGGER;
    this.completion = new TxnCompletion({
      clock: this.clock,
      log: this.log,
      markers: options.markers,
      partitionExists: (t, p) => {
        const info = options.topics.get(t);
        return info !== undefined && p >= 0 && p < info.partitions;
      },
      commit: (shard, gen, txn, next, completing) => this.commit(shard, gen, txn, next, completing),
      abort: (shard, txn) => this.abortTimedOut(shard, txn),
      config: this.config,
    });
  }

  // ------------------------------------------------------------------------------------------ lifecycle

  get isActive(): boolean {
    return this.accepting;
  }

  get numPartitions(): number {
    return this.count;
  }

  /**
   * Creates __transaction_state if it does not exist (a member of a shared cluster: once enough brokers are
   * live, looked at again every second and whenever the topic appears); its partitions load on first use.
   */
  async start(): Promise<void> {
    if (this.starter) return;
    const starter = (this.starter = new InternalTopicStarter(TRANSACTION_STATE_TOPIC_NAME, this.clock, this.log, async () => {
      if (this.accepting) return true;
      const count = await this.ensureTopic();
      if (count === null) return false;
      if (this.accepting || this.stopped) return true;
      this.count = count;
      this.shards = new Array<TxnShard | undefined>(this.count);
      this.accepting = true;
      return true;
    }));
    this.options.topics.addListener?.({
      topicCreated: (t) => {
        if (t.name === TRANSACTION_STATE_TOPIC_NAME) starter.poke();
      },
    });
    await starter.start();
  }

  /** Looks again now whether __transaction_state can be created (the live brokers changed). */
  checkInternalTopic(): void {
    this.starter?.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.starter?.cancel();
    if (!this.accepting) return;
    this.accepting = false;
    const all = this.shards.filter((s): s is TxnShard => s !== undefined);
    this.shards = new Array<TxnShard | undefined>(this.count);
    await Promise.all(all.map((s) => s.close()));
  }

  /** The view gave a __transaction_state partition to another broker: its shard closes (Kafka's onResignation). */
  async released(partition: number): Promise<void> {
    const s = this.shards[partition];
    if (!s) return;
    this.shards[partition] = undefined;
    await s.close();
  }

  /** Kafka's TransactionStateManager.partitionFor: abs(hashCode) % partitions, as the cluster view hashes it. */
  partitionFor(transactionalId: string): number {
    return coordinatorPartition(transactionalId, this.count || this.config.numPartitions);
  }

  /** Loads every owned partition; resolves with the shards once their loads are over. */
  async loadOwned(): Promise<TxnShard[]> {
    const all: number[] = [];
    for (let p = 0; p < this.count; p++) all.push(p);
    return this.load(all);
  }

  /**
   * Loads the owned ones of `partitions` (Kafka loads a __transaction_state partition as it becomes its leader),
   * so that their transactions in PrepareCommit/PrepareAbort write their markers and their ongoing ones time out
   * without waiting for a request. Resolves with the shards once their loads are over.
   */
  async load(partitions: readonly number[]): Promise<TxnShard[]> {
    if (!this.accepting) return [];
    const owned: TxnShard[] = [];
    for (const p of partitions) {
      if (Number.isInteger(p) && p >= 0 && p < this.count && (!this.options.ownership || this.options.ownership.owns(p))) owned.push(this.shardOf(p));
    }
    await Promise.all(owned.map((s) => this.untilLoaded(s)));
    return owned;
  }

  /** The partitions of __transaction_state, created if missing; null while it waits for brokers (../internal-topic.ts). */
  private async ensureTopic(): Promise<number | null> {
    const existing = this.options.topics.get(TRANSACTION_STATE_TOPIC_NAME);
    if (existing) return existing.partitions;
    if (!this.options.topics.create) return this.config.numPartitions;
    // Kafka's TransactionStateManager.transactionTopicConfigs (the log cleaner compacts the topic: storage.ts);
    // transaction.state.log.replication.factor: a member waits for that many live brokers, as Kafka does, a
    // broker alone caps it to the live brokers; min.insync.replicas is capped to it.
    const live = this.options.liveBrokers?.() ?? 1;
    const replicationFactor = internalTopicReplicas(this.config.replicationFactor, live, this.options.awaitReplicas === true);
    if (replicationFactor === null) {
      this.starter?.waiting(`${TRANSACTION_STATE_TOPIC_NAME} is created once transaction.state.log.replication.factor brokers are live; transactional requests answer COORDINATOR_NOT_AVAILABLE until then`, {
        replicationFactor: this.config.replicationFactor,
        liveBrokers: live,
      });
      return null;
    }
    try {
      const t = await this.options.topics.create(TRANSACTION_STATE_TOPIC_NAME, {
        partitions: this.config.numPartitions,
        replicationFactor,
        configs: {
          'cleanup.policy': 'compact',
          'min.insync.replicas': String(Math.min(this.config.minIsr, replicationFactor)),
          'segment.bytes': String(this.config.segmentBytes),
          'unclean.leader.election.enable': 'false',
          'compression.type': 'uncompressed',
        },
        allowInternal: true,
      });
      this.log.info({ partitions: t.partitions }, `created ${TRANSACTION_STATE_TOPIC_NAME}`);
      return t.partitions;
    } catch (e) {
      const again = this.options.topics.get(TRANSACTION_STATE_TOPIC_NAME);
      if (again) return again.partitions;
      throw e;
    }
  }

  private shardOf(partition: number): TxnShard {
    let s = this.shards[partition];
    if (s) return s;
    s = new TxnShard({
      partition,
      clock: this.clock,
      openLog: this.options.openLog,
      ...(this.options.coordinatorEpoch ? { coordinatorEpoch: this.options.coordinatorEpoch } : {}),
      hooks: {
        onLoaded: (sh) => {
          this.log.debug({ partition: sh.partition, transactionalIds: sh.txns.size }, `loaded ${TRANSACTION_STATE_TOPIC_NAME} partition`);
          this.completion.onLoaded(sh);
        },
        onLoadFailed: (sh, err) => this.log.error({ partition: sh.partition, err }, `cannot load ${TRANSACTION_STATE_TOPIC_NAME} partition; retrying`),
        onUndecodable: (sh, err) => this.log.error({ partition: sh.partition, err }, `skipped a stored ${TRANSACTION_STATE_TOPIC_NAME} record that does not decode`),
      },
    });
    this.shards[partition] = s;
    void s.load();
    return s;
  }

  private untilLoaded(s: TxnShard): Promise<void> {
    if (s.status !== 'loading') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.clock.setTimer(LAZY_LOAD_WAIT_MS, resolve);
      void s.whenLoaded().then(() => {
        timer.cancel();
        resolve();
      });
    });
  }

  /** The active shard of an id, or the error Kafka's getTransactionState answers. */
  private async shardFor(transactionalId: string): Promise<TxnShard | number> {
    if (!this.accepting) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const p = this.partitionFor(transactionalId);
    if (this.options.ownership && !this.options.ownership.owns(p)) return ErrorCode.NOT_COORDINATOR;
    const s = this.shardOf(p);
    await this.untilLoaded(s);
    return s.status === 'active' ? s : s.errorCode;
  }

  /**
   * Makes `next` durable and then applies it (Kafka's appendTransactionToLog then completeTransitionTo); `null`
   * writes a tombstone and removes the id. Answers CONCURRENT_TRANSACTIONS while another change of the id is
   * being written. `completing`: the write of Complete* whose pending state the markers set (they hold it while
   * they are written, as Kafka's prepareComplete does before it sends them); it stays pending if the write fails.
   */
  private async commit(shard: TxnShard, generation: number, txn: TransactionMetadata, next: TxnValue | null, completing = false): Promise<number> {
    if (!completing) {
      if (txn.pending !== null) return ErrorCode.CONCURRENT_TRANSACTIONS;
      txn.pending = next === null ? TxnState.Dead : next.state;
    }
    try {
      await shard.append([encodeTxnRecord(txn.transactionalId, next)], generation);
    } catch (e) {
      if (shard.generation === generation && !completing) txn.pending = null;
      return errorCodeOf(e);
    }
    txn.pending = null;
    if (next === null) {
      if (shard.txns.get(txn.transactionalId) === txn) shard.txns.delete(txn.transactionalId);
    } else txn.value = next;
    return NONE;
  }

  // ------------------------------------------------------------------------------------------ InitProducerId

  /**
   * InitProducerId for a transactional id (Kafka's handleInitProducerId): a new id gets a producer id and epoch
   * 0; a known one an epoch bump (a new producer id once the epoch is exhausted); an ongoing transaction is
   * aborted first with a fenced epoch, answering CONCURRENT_TRANSACTIONS until the producer retries after it.
   * `expected` is the KIP-360 producer id and epoch of v3+ (null when absent). Answers PRODUCER_FENCED, which
   * the handler turns into INVALID_PRODUCER_EPOCH for versions before 4.
   */
  async initProducerId(transactionalId: string, timeoutMs: number, expected: { producerId: bigint; producerEpoch: number } | null): Promise<InitProducerIdResult> {
    const fail = (errorCode: number): InitProducerIdResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    // TransactionLogKey holds the id as an int16-length string: a longer one (flexible versions can carry it)
    // could never be written. Kafka fails when it serializes the record; it is refused here before any state.
    if (exceedsInt16String(transactionalId)) return fail(ErrorCode.INVALID_REQUEST);
    if (timeoutMs <= 0 || timeoutMs > this.config.maxTimeoutMs) return fail(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    const shard = await this.shardFor(transactionalId);
    if (typeof shard === 'number') return fail(shard);
    const generation = shard.generation;
    let txn = shard.txns.get(transactionalId);
    if (!txn) {
      let producerId: bigint;
      try {
        producerId = await this.options.producerIds.allocate();
      } catch (err) {
        this.log.warn({ err }, 'cannot allocate a producer id');
        return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
      if (shard.generation !== generation || shard.status !== 'active') return fail(shard.status === 'active' ? ErrorCode.NOT_COORDINATOR : shard.errorCode);
      txn = shard.txns.get(transactionalId);
      if (!txn) {
        const now = this.clock.now();
        txn = new TransactionMetadata(transactionalId, {
          producerId,
          previousProducerId: NO_PRODUCER_ID,
          nextProducerId: NO_PRODUCER_ID,
          producerEpoch: NO_PRODUCER_EPOCH,
          lastProducerEpoch: NO_PRODUCER_EPOCH,
          clientTransactionVersion: TV_0,
          timeoutMs,
          state: TxnState.Empty,
          partitions: new Map(),
          startTimestamp: -1,
          lastUpdateTimestamp: now,
        });
        shard.txns.set(transactionalId, txn);
      }
    }
    if (txn.pendingTransitionInProgress) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    const v = txn.value;
    // Kafka's isValidProducerId: fence a request naming another producer, unless the id was just created, or it
    // names the previous producer id with an exhausted epoch (a retry after a rotation it never heard of).
    if (expected && !(v.producerEpoch === NO_PRODUCER_EPOCH || expected.producerId === v.producerId || (expected.producerId === v.previousProducerId && isEpochExhausted(expected.producerEpoch)))) {
      return fail(ErrorCode.PRODUCER_FENCED);
    }
    const now = this.clock.now();
    switch (v.state) {
      case TxnState.PrepareCommit:
      case TxnState.PrepareAbort:
        return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      case TxnState.Ongoing: {
        // Abort the ongoing transaction with a bumped epoch (PrepareEpochFence, written as its PrepareAbort); the
        // producer retries and gets the next epoch once the abort completed.
        const code = await this.prepareEnd(shard, generation, txn, false, true);
        return fail(code === NONE ? ErrorCode.CONCURRENT_TRANSACTIONS : code);
      }
      case TxnState.Empty:
      case TxnState.CompleteCommit:
      case TxnState.CompleteAbort:
        break;
      default:
        return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    }
    let next: TxnValue;
    if (isEpochExhausted(v.producerEpoch) && (!expected || expected.producerEpoch === v.producerEpoch)) {
      // Kafka's prepareProducerIdRotation: a new producer id at epoch 0.
      let producerId: bigint;
      try {
        producerId = await this.options.producerIds.allocate();
      } catch (err) {
        this.log.warn({ err }, 'cannot allocate a producer id');
        return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
      if (shard.generation !== generation || shard.txns.get(transactionalId) !== txn || txn.value !== v) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
      next = txn.transit(TxnState.Empty, {
        producerId,
        previousProducerId: v.producerId,
        producerEpoch: 0,
        lastProducerEpoch: expected ? v.producerEpoch : NO_PRODUCER_EPOCH,
        timeoutMs,
        partitions: new Map(),
        startTimestamp: -1,
        lastUpdateTimestamp: now,
      });
    } else {
      // Kafka's prepareIncrementProducerEpoch.
      let epoch: number;
      let last: number;
      if (!expected) {
        epoch = v.producerEpoch + 1;
        last = NO_PRODUCER_EPOCH;
      } else if (v.producerEpoch === NO_PRODUCER_EPOCH || expected.producerEpoch === v.producerEpoch) {
        epoch = v.producerEpoch + 1;
        last = v.producerEpoch;
      } else if (expected.producerEpoch === v.lastProducerEpoch) {
        // A retry of a bump that succeeded: the same answer again.
        epoch = v.producerEpoch;
        last = v.lastProducerEpoch;
      } else {
        return fail(ErrorCode.PRODUCER_FENCED);
      }
      next = txn.transit(TxnState.Empty, { producerEpoch: epoch, lastProducerEpoch: last, timeoutMs, partitions: new Map(), startTimestamp: -1, lastUpdateTimestamp: now });
    }
    const code = await this.commit(shard, generation, txn, next);
    return code === NONE ? { errorCode: NONE, producerId: next.producerId, producerEpoch: next.producerEpoch } : fail(code);
  }

  // ------------------------------------------------------------------------------------------ AddPartitionsToTxn

  /**
   * AddPartitionsToTxn (v0-3, and v4+ entries without verifyOnly): partitions that do not exist answer
   * UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED (KafkaApis); otherwise every partition gets
   * the coordinator's answer (Kafka's handleAddPartitionsToTransaction).
   */
  async addPartitionsToTxn(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartitionRef[], clientTransactionVersion = TV_0): Promise<PartitionError[]> {
    const unknown = partitions.filter((p) => !this.partitionExists(p.topic, p.partition));
    if (unknown.length > 0) {
      const bad = new Set(unknown.map((p) => `${p.topic}\0${p.partition}`));
      return partitions.map((p) => ({ ...p, errorCode: bad.has(`${p.topic}\0${p.partition}`) ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.OPERATION_NOT_ATTEMPTED }));
    }
    const code = await this.addPartitions(transactionalId, producerId, producerEpoch, partitions, clientTransactionVersion);
    return partitions.map((p) => ({ ...p, errorCode: code }));
  }

  /**
   * The transaction of `transactionalId` as a request of its producer finds it, or the error Kafka answers first:
   * INVALID_REQUEST for an empty id, the shard's (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, ...),
   * INVALID_PRODUCER_ID_MAPPING for an unknown id or another producer id, PRODUCER_FENCED for another epoch.
   */
  private async producerTxn(transactionalId: string, producerId: bigint, producerEpoch: number): Promise<{ shard: TxnShard; txn: TransactionMetadata } | number> {
    if (transactionalId === '') return ErrorCode.INVALID_REQUEST;
    const shard = await this.shardFor(transactionalId);
    if (typeof shard === 'number') return shard;
    const txn = shard.txns.get(transactionalId);
    if (!txn || txn.value.producerId !== producerId) return ErrorCode.INVALID_PRODUCER_ID_MAPPING;
    if (txn.value.producerEpoch !== producerEpoch) return ErrorCode.PRODUCER_FENCED;
    return { shard, txn };
  }

  /** AddOffsetsToTxn: adds the group's __consumer_offsets partition to the transaction (KIP-98, KIP-447). */
  async addOffsetsToTxn(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    return this.addPartitions(transactionalId, producerId, producerEpoch, [{ topic: GROUP_METADATA_TOPIC_NAME, partition: this.options.groupPartitionFor(groupId) }], TV_0);
  }

  /** `clientTransactionVersion`: the request's (Kafka: 2 for AddPartitionsToTxn v5, 0 below), recorded with the transaction. */
  private async addPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartitionRef[], clientTransactionVersion: number): Promise<number> {
    const found = await this.producerTxn(transactionalId, producerId, producerEpoch);
    if (typeof found === 'number') return found;
    const { shard, txn } = found;
    const v = txn.value;
    if (txn.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (v.state === TxnState.PrepareCommit || v.state === TxnState.PrepareAbort) return ErrorCode.CONCURRENT_TRANSACTIONS;
    if (v.state === TxnState.Ongoing && partitions.every((p) => txn.hasPartition(p.topic, p.partition))) return NONE;
    if (v.state !== TxnState.Ongoing && v.state !== TxnState.Empty && v.state !== TxnState.CompleteCommit && v.state !== TxnState.CompleteAbort) return ErrorCode.INVALID_TXN_STATE;
    const now = this.clock.now();
    // Kafka's prepareAddPartitions: a transaction starts when its first partition is added.
    const next = txn.transit(TxnState.Ongoing, {
      partitions: unionPartitions(v.state === TxnState.Ongoing ? v.partitions : new Map(), partitions),
      startTimestamp: v.state === TxnState.Ongoing ? v.startTimestamp : now,
      lastUpdateTimestamp: now,
      clientTransactionVersion,
    });
    return this.commit(shard, shard.generation, txn, next);
  }

  /**
   * AddPartitionsToTxn v4+ with verifyOnly (Kafka's handleVerifyPartitionsInTransaction, KIP-890 part 1): NONE
   * for each partition in the ongoing transaction, TRANSACTION_ABORTABLE for the others.
   */
  async verifyPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartitionRef[]): Promise<PartitionError[]> {
    const all = (errorCode: number): PartitionError[] => partitions.map((p) => ({ ...p, errorCode }));
    const found = await this.producerTxn(transactionalId, producerId, producerEpoch);
    if (typeof found === 'number') return all(found);
    const { txn } = found;
    const v = txn.value;
    // The pending state is not looked at: partitions are added once durable, removed once the markers are written.
    if (v.state === TxnState.PrepareCommit || v.state === TxnState.PrepareAbort) return all(ErrorCode.CONCURRENT_TRANSACTIONS);
    return partitions.map((p) => ({ ...p, errorCode: txn.hasPartition(p.topic, p.partition) ? NONE : ErrorCode.TRANSACTION_ABORTABLE }));
  }

  /**
   * The seam Produce calls before the first transactional batch of a producer's transaction in a partition
   * (KIP-890 part 1): the verify-only check of that one partition, with the errors mapped as Kafka's
   * AddPartitionsToTxnManager maps them for clients of transaction version 1: TRANSACTION_ABORTABLE →
   * INVALID_TXN_STATE, PRODUCER_FENCED → INVALID_PRODUCER_EPOCH. Coordinator errors (NOT_COORDINATOR,
   * COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS, ...) are returned as they are.
   *
   * `addPartition`: the producer runs transaction version 2 (Produce v12+, TxnOffsetCommit v5+, KIP-890 part
   * 2), which sends no AddPartitionsToTxn: the partition is added to its transaction here, starting one from
   * Empty or Complete*, as Kafka's AddPartitionsToTxnManager does with AddPartitionsToTxn v5 (not verify-only),
   * and the transaction is recorded with client transaction version 2.
   */
  async verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, addPartition = false): Promise<number> {
    const code = addPartition
      ? await this.addPartitions(transactionalId, producerId, producerEpoch, [{ topic, partition }], TV_2)
      : (await this.verifyPartitions(transactionalId, producerId, producerEpoch, [{ topic, partition }]))[0]!.errorCode;
    if (code === ErrorCode.TRANSACTION_ABORTABLE) return ErrorCode.INVALID_TXN_STATE;
    if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
    return code;
  }

  // ------------------------------------------------------------------------------------------ EndTxn

  /**
   * EndTxn with transaction version 1 semantics (Kafka's endTransactionWithTV1, isFromClient): PrepareCommit or
   * PrepareAbort is made durable and answered NONE; the markers are then written for every partition, retried
   * until they all are, and the Complete* state follows. Any end while a transaction completes answers
   * CONCURRENT_TRANSACTIONS (Complete* is pending meanwhile); a repeated end of a completed transaction NONE,
   * the opposite end INVALID_TXN_STATE.
   */
  async endTxn(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean): Promise<number> {
    const found = await this.producerTxn(transactionalId, producerId, producerEpoch);
    if (typeof found === 'number') return found;
    const { shard, txn } = found;
    const v = txn.value;
    if (txn.pendingTransitionInProgress) return ErrorCode.CONCURRENT_TRANSACTIONS;
    switch (v.state) {
      case TxnState.Ongoing:
        return this.prepareEnd(shard, shard.generation, txn, commit, false, END_TXN_COMPLETION_WAIT_MS);
      case TxnState.CompleteCommit:
        return commit ? NONE : this.invalidTransition(txn, commit);
      case TxnState.CompleteAbort:
        return commit ? this.invalidTransition(txn, commit) : NONE;
      case TxnState.PrepareCommit:
        return commit ? ErrorCode.CONCURRENT_TRANSACTIONS : this.invalidTransition(txn, commit);
      case TxnState.PrepareAbort:
        return commit ? this.invalidTransition(txn, commit) : ErrorCode.CONCURRENT_TRANSACTIONS;
      default:
        return this.invalidTransition(txn, commit);
    }
  }

  /**
   * EndTxn v5 (transaction version 2, KIP-890 part 2): every end bumps the epoch (end-txn-v2.ts decides); the
   * markers carry the bumped epoch, and the answer the producer id and epoch the producer goes on with: the
   * bumped epoch, or a new producer id at epoch 0 once the epoch was exhausted.
   */
  async endTxnV2(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean): Promise<EndTxnResult> {
    const fail = (errorCode: number): EndTxnResult => ({ errorCode, producerId: NO_PRODUCER_ID, producerEpoch: NO_PRODUCER_EPOCH });
    if (transactionalId === '') return fail(ErrorCode.INVALID_REQUEST);
    const shard = await this.shardFor(transactionalId);
    if (typeof shard === 'number') return fail(shard);
    const generation = shard.generation;
    const txn = shard.txns.get(transactionalId);
    if (!txn) return fail(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    const d = decideEndTxnV2(txn, producerId, producerEpoch, commit);
    if (d.kind === 'answer') {
      if (d.errorCode === ErrorCode.INVALID_TXN_STATE) this.invalidTransition(txn, commit);
      return { errorCode: d.errorCode, producerId: d.producerId, producerEpoch: d.producerEpoch };
    }
    const v = txn.value;
    let nextProducerId = NO_PRODUCER_ID;
    if (d.newProducerId) {
      try {
        nextProducerId = await this.options.producerIds.allocate();
      } catch (err) {
        this.log.warn({ err }, 'cannot allocate a producer id');
        return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
      }
      if (shard.generation !== generation || shard.txns.get(transactionalId) !== txn || txn.value !== v) return fail(ErrorCode.CONCURRENT_TRANSACTIONS);
    }
    const next = endTxnV2Transit(txn, d, nextProducerId, this.clock.now());
    const code = await this.commit(shard, generation, txn, next);
    if (code !== NONE) return fail(code);
    await settledWithin(this.completion.sendMarkers(shard, txn), END_TXN_COMPLETION_WAIT_MS);
    return endTxnV2Answer(next);
  }

  private invalidTransition(txn: TransactionMetadata, commit: boolean): number {
    this.log.debug({ transactionalId: txn.transactionalId, state: txnStateName(txn.state) }, `cannot ${commit ? 'commit' : 'abort'} a transaction in state ${txnStateName(txn.state)}`);
    return ErrorCode.INVALID_TXN_STATE;
  }

  /**
   * Writes PrepareCommit/PrepareAbort (a fence bumps the epoch first) and starts the markers once durable. With
   * `waitMs`, answers once the markers and Complete* are durable too or after `waitMs`, whichever comes first.
   */
  private async prepareEnd(shard: TxnShard, generation: number, txn: TransactionMetadata, commit: boolean, fence: boolean, waitMs = 0): Promise<number> {
    const v = txn.value;
    const epoch = fence && v.producerEpoch < 32767 ? v.producerEpoch + 1 : v.producerEpoch;
    const next = txn.transit(commit ? TxnState.PrepareCommit : TxnState.PrepareAbort, {
      producerEpoch: epoch,
      // A fence of a TV2 transaction bumps as its prepareAbortOrCommit does, keeping the epoch it leaves as the last.
      lastProducerEpoch: fence ? (supportsEpochBump(v.clientTransactionVersion) ? v.producerEpoch : NO_PRODUCER_EPOCH) : v.lastProducerEpoch,
      lastUpdateTimestamp: this.clock.now(),
      // Kafka's prepareAbortOrCommit takes the client's version (EndTxn v4 or below: 0); a fence keeps the transaction's.
      clientTransactionVersion: fence ? v.clientTransactionVersion : TV_0,
    });
    const code = await this.commit(shard, generation, txn, next);
    if (code !== NONE) return code;
    const completing = this.completion.sendMarkers(shard, txn);
    if (waitMs > 0) await settledWithin(completing, waitMs);
    return code;
  }

  /** Aborts a timed-out transaction with an epoch bump (Kafka's abortTimedOutTransactions). */
  abortTimedOut(shard: TxnShard, txn: TransactionMetadata): Promise<number> {
    return this.prepareEnd(shard, shard.generation, txn, false, true);
  }

  // ------------------------------------------------------------------------------------------ Describe / List

  /** DescribeTransactions (KIP-664). */
  async describeTransactions(transactionalIds: readonly string[]): Promise<DescribedTransaction[]> {
    const out: DescribedTransaction[] = [];
    for (const transactionalId of transactionalIds) {
      if (transactionalId === '' || !this.accepting) {
        out.push({ transactionalId, errorCode: transactionalId === '' && this.accepting ? ErrorCode.INVALID_REQUEST : ErrorCode.COORDINATOR_NOT_AVAILABLE, state: '', timeoutMs: 0, startTimeMs: 0, producerId: 0n, producerEpoch: 0, partitions: [] });
        continue;
      }
      // An error leaves the other fields at the schema's defaults, as Kafka's handleDescribeTransactions does.
      const base = { transactionalId, state: '', timeoutMs: 0, startTimeMs: 0, producerId: 0n, producerEpoch: 0, partitions: [] };
      const shard = await this.shardFor(transactionalId);
      if (typeof shard === 'number') {
        out.push({ ...base, errorCode: shard });
        continue;
      }
      const txn = shard.txns.get(transactionalId);
      // An id being removed (Dead) is reported as not found, as Kafka does.
      if (!txn || txn.pending === TxnState.Dead || txn.state === TxnState.Dead) {
        out.push({ ...base, errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND });
        continue;
      }
      const v = txn.value;
      out.push({
        transactionalId,
        errorCode: NONE,
        state: txnStateName(v.state),
        timeoutMs: v.timeoutMs,
        startTimeMs: v.startTimestamp,
        producerId: v.producerId,
        producerEpoch: v.producerEpoch,
        partitions: [...v.partitions].map(([topic, ps]) => ({ topic, partitions: [...ps].sort((a, b) => a - b) })),
      });
    }
    return out;
  }

  /** ListTransactions (KIP-664; v1 duration filter, KIP-994; v2 transactional id pattern, KIP-1152). */
  async listTransactions(filters: ListTransactionsFilters): Promise<ListTransactionsResult> {
    const unknownStateFilters: string[] = [];
    const states = new Set<TxnState>();
    for (const name of filters.states) {
      const s = txnStateFromName(name);
      if (s === undefined) unknownStateFilters.push(name);
      else states.add(s);
    }
    let pattern: RegExp | null = null;
    if (filters.transactionalIdPattern !== null && filters.transactionalIdPattern !== '') {
      try {
        pattern = javaPatternToRegExp(filters.transactionalIdPattern);
      } catch {
        return { errorCode: ErrorCode.INVALID_REGULAR_EXPRESSION, unknownStateFilters, transactions: [] };
      }
    }
    if (!this.accepting) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, unknownStateFilters, transactions: [] };
    const shards = await this.loadOwned();
    // Kafka answers COORDINATOR_LOAD_IN_PROGRESS while any of its partitions loads.
    const notReady = shards.find((s) => s.status !== 'active' && s.status !== 'closed');
    if (notReady) return { errorCode: notReady.errorCode, unknownStateFilters, transactions: [] };
    const producerIds = new Set(filters.producerIds);
    const now = this.clock.now();
    const transactions: ListTransactionsResult['transactions'] = [];
    for (const s of shards) {
      if (s.status !== 'active') continue;
      for (const txn of s.txns.values()) {
        const v = txn.value;
        // Dead is transient (the id is being removed): never listed.
        if (v.state === TxnState.Dead || txn.pending === TxnState.Dead) continue;
        if (producerIds.size > 0 && !producerIds.has(v.producerId)) continue;
        if (states.size > 0 && !states.has(v.state)) continue;
        if (filters.durationMs >= 0 && now - v.startTimestamp <= filters.durationMs) continue;
        if (pattern && !pattern.test(txn.transactionalId)) continue;
        transactions.push({ transactionalId: txn.transactionalId, producerId: v.producerId, state: txnStateName(v.state) });
      }
    }
    return { errorCode: NONE, unknownStateFilters, transactions };
  }

  /** The loaded state of an id (tests, tools). */
  peek(transactionalId: string): (TxnValue & { pending: TxnState | null }) | undefined {
    const txn = this.shards[this.partitionFor(transactionalId)]?.txns.get(transactionalId);
    return txn ? { ...txn.value, pending: txn.pending } : undefined;
  }

  /** Whether the partition exists (KafkaApis' metadataCache.contains, for AddPartitionsToTxn's answers). */
  partitionExists(topic: string, partition: number): boolean {
    const info = this.options.topics.get(topic);
    return info !== undefined && partition >= 0 && partition < info.partitions;
  }
}
