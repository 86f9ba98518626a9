/**
 * A transactional producer's requests, on one connection, as Kafka's producer sends them with the
 * transaction protocol of KIP-98 (transaction.version 1: partitions added explicitly):
 *
 *   FindCoordinator(key type 1 = transaction, the transactional id) ──► coordinator node
 *   InitProducerId(transactional id) ──► producer id + epoch (fences older instances of the id)
 *   per transaction:
 *     AddPartitionsToTxn(v3 and below: the client form) ── the partitions it is about to write
 *     Produce batches: isTransactional, the producer id/epoch, sequences per partition   (load.ts)
 *     EndTxn(commit)
 *
 * Versions are capped where Kafka's producer caps them without transaction.version 2 (KIP-890 part 2):
 * AddPartitionsToTxn ≤ 3 (v4+ is the brokers' batched form), EndTxn ≤ 4 (v5 bumps the epoch at every
 * commit), Produce ≤ 11 (from v12 a broker with transaction.version 2 adds partitions implicitly).
 *
 * Retries follow Kafka's producer: the coordinator's loading errors while __transaction_state is created
 * (a fresh Kafka creates it on the first FindCoordinator of key type 1), and CONCURRENT_TRANSACTIONS, which
 * AddPartitionsToTxn answers while the previous transaction's markers are being written, retried after
 * 20 ms (the producer's short backoff for it). Any other error is a TransactionError naming the request,
 * the transactional id and the broker's error.
 */
import { performance } from 'node:perf_hooks';
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { FindCoordinatorApi, createFindCoordinatorRequest } from '../../protocol/messages/010-find-coordinator.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { AddPartitionsToTxnApi, createAddPartitionsToTxnRequest } from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { EndTxnApi, createEndTxnRequest } from '../../protocol/messages/026-end-txn.gen.js';
import type { Connection } from '../../src/client/index.js';

/** Kafka's CoordinatorType.TRANSACTION. */
export const TRANSACTION_KEY_TYPE = 1;
/** Kafka's AddPartitionsToTxnRequest.LAST_CLIENT_VERSION: v4+ is sent by brokers. */
export const ADD_PARTITIONS_CLIENT_MAX_VERSION = 3;
/** EndTxn without KIP-890 part 2's epoch bump. */
export const END_TXN_V1_MAX_VERSION = 4;
/** Produce without KIP-890 part 2's implicit AddPartitionsToTxn. */
export const PRODUCE_TXN_V1_MAX_VERSION = 11;
/** InitProducerId v6 (2PC, KIP-939) is unstable in Kafka 4.4: its producer sends at most v5. */
export const INIT_PRODUCER_ID_MAX_VERSION = 5;
/** Kafka's producer default transaction.timeout.ms. */
export const TRANSACTION_TIMEOUT_MS = 60_000;
/** Kafka's producer retries AddPartitionsToTxn's CONCURRENT_TRANSACTIONS after 20 ms rather than retry.backoff.ms. */
export const CONCURRENT_TRANSACTIONS_BACKOFF_MS = 20;

/** A request of the transaction protocol answered an error the producer does not retry (or retried too long). */
export class TransactionError extends Error {
  readonly code = 'LL_ERR_BENCH_TXN';
  constructor(
    /** The request: `InitProducerId`, `AddPartitionsToTxn`, `Produce`, ... */
    readonly request: string,
    /** Kafka's name of the error answered. */
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

export interface TransactionalProducer {
  readonly transactionalId: string;
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export interface RetryOptions {
  /** Give up retrying after this long. Default 60 s. */
  timeoutMs?: number;
  /** Backoff for the coordinator's loading errors. Default 100 ms (Kafka's retry.backoff.ms). */
  backoffMs?: number;
}

export interface TopicPartitions {
  readonly topic: string;
  readonly partitions: readonly number[];
}

const COORDINATOR_LOADING = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR]);

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function failure(request: string, transactionalId: string, code: number, message?: string | null): TransactionError {
  const name = errorByCode(code).name;
  return new TransactionError(request, name, `${request} for transactional id ${JSON.stringify(transactionalId)} answered ${name}${message ? ` (${message})` : ''}`);
}

/**
 * Runs `attempt` until it answers NONE, retrying the codes `retriable` picks (with their backoff) until the
 * deadline; anything else, or the deadline, throws `failure`.
 */
async function withRetries<T>(
  request: string,
  transactionalId: string,
  o: RetryOptions,
  retriable: (code: number) => number | null,
  attempt: () => Promise<{ code: number; message?: string | null; value?: T }>,
): Promise<{ value: T; retries: number }> {
  const deadline = performance.now() + (o.timeoutMs ?? 60_000);
  for (let retries = 0; ; retries++) {
    const r = await attempt();
    if (r.code === ErrorCode.NONE) return { value: r.value as T, retries };
    const backoff = retriable(r.code);
    if (backoff === null || performance.now() + backoff > deadline) throw failure(request, transactionalId, r.code, r.message);
    await sleep(backoff);
  }
}

/** The node id of the transaction coordinator of `transactionalId`. */
export async function findTransactionCoordinator(conn: Connection, transactionalId: string, o: RetryOptions = {}): Promise<number> {
  const version = conn.versionFor(FindCoordinatorApi, { min: 1 });
  const backoff = o.backoffMs ?? 100;
  const { value } = await withRetries('FindCoordinator', transactionalId, o, (c) => (COORDINATOR_LOADING.has(c) ? backoff : null), async () => {
    // v4+ looks up a list of keys (KIP-699); v1-3 one key.
    const batched = version >= 4;
    const res = await conn.request(
      FindCoordinatorApi,
      createFindCoordinatorRequest(batched ? { keyType: TRANSACTION_KEY_TYPE, coordinatorKeys: [transactionalId] } : { keyType: TRANSACTION_KEY_TYPE, key: transactionalId }),
      { version },
    );
    const one = batched ? res.coordinators.find((c) => c.key === transactionalId) : res;
    if (!one) return { code: ErrorCode.UNKNOWN_SERVER_ERROR, message: 'no coordinator for the key in the answer' };
    return { code: one.errorCode, message: one.errorMessage, value: one.nodeId };
  });
  return value;
}

/** InitProducerId with the transactional id: a producer id and a new epoch, fencing earlier producers of the id. */
export async function initTransactions(conn: Connection, transactionalId: string, o: RetryOptions & { transactionTimeoutMs?: number } = {}): Promise<TransactionalProducer> {
  const backoff = o.backoffMs ?? 100;
  // CONCURRENT_TRANSACTIONS: an earlier producer of the id left a transaction the coordinator is aborting.
  const retriable = (c: number): number | null => (COORDINATOR_LOADING.has(c) || c === ErrorCode.CONCURRENT_TRANSACTIONS ? backoff : null);
  const version = conn.versionFor(InitProducerIdApi, { max: INIT_PRODUCER_ID_MAX_VERSION });
  const { value } = await withRetries('InitProducerId', transactionalId, o, retriable, async () => {
    const res = await conn.request(
      InitProducerIdApi,
      InitProducerIdApi.request.create({ transactionalId, transactionTimeoutMs: o.transactionTimeoutMs ?? TRANSACTION_TIMEOUT_MS, producerId: -1n, producerEpoch: -1 }),
      { version },
    );
    return { code: res.errorCode, value: { transactionalId, producerId: res.producerId, producerEpoch: res.producerEpoch } };
  });
  return value;
}

/**
 * Adds partitions to the producer's transaction (the transaction begins with the first). Resolves with
 * the number of CONCURRENT_TRANSACTIONS retries: the time the previous commit's markers kept it waiting.
 */
export async function addPartitionsToTxn(conn: Connection, p: TransactionalProducer, topics: readonly TopicPartitions[], o: RetryOptions = {}): Promise<number> {
  const version = conn.versionFor(AddPartitionsToTxnApi, { max: ADD_PARTITIONS_CLIENT_MAX_VERSION });
  const backoff = o.backoffMs ?? 100;
  const retriable = (c: number): number | null => (c === ErrorCode.CONCURRENT_TRANSACTIONS ? CONCURRENT_TRANSACTIONS_BACKOFF_MS : COORDINATOR_LOADING.has(c) ? backoff : null);
  const request = createAddPartitionsToTxnRequest({
    v3AndBelowTransactionalId: p.transactionalId,
    v3AndBelowProducerId: p.producerId,
    v3AndBelowProducerEpoch: p.producerEpoch,
    v3AndBelowTopics: topics.map((t) => ({ name: t.topic, partitions: [...t.partitions] })),
  });
  const { retries } = await withRetries('AddPartitionsToTxn', p.transactionalId, o, retriable, async () => {
    const res = await conn.request(AddPartitionsToTxnApi, request, { version });
    // Errors are per partition; the others of a failed request answer OPERATION_NOT_ATTEMPTED.
    let code: number = ErrorCode.NONE;
    let answered = 0;
    for (const t of res.resultsByTopicV3AndBelow) {
      for (const r of t.resultsByPartition) {
        answered++;
        if (r.partitionErrorCode !== ErrorCode.NONE && (code === ErrorCode.NONE || code === ErrorCode.OPERATION_NOT_ATTEMPTED)) code = r.partitionErrorCode;
      }
    }
    const asked = topics.reduce((n, t) => n + t.partitions.length, 0);
    if (code === ErrorCode.NONE && answered < asked) return { code: ErrorCode.UNKNOWN_SERVER_ERROR, message: `${answered} of ${asked} partitions answered` };
    return { code };
  });
  return retries;
}

/** EndTxn: commits (or aborts) the producer's transaction; resolves once the coordinator has prepared it. */
export async function endTxn(conn: Connection, p: TransactionalProducer, commit: boolean, o: RetryOptions = {}): Promise<void> {
  const version = conn.versionFor(EndTxnApi, { max: END_TXN_V1_MAX_VERSION });
  const backoff = o.backoffMs ?? 100;
  const retriable = (c: number): number | null => (COORDINATOR_LOADING.has(c) || c === ErrorCode.CONCURRENT_TRANSACTIONS ? backoff : null);
  const request = createEndTxnRequest({ transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed: commit });
  await withRetries('EndTxn', p.transactionalId, o, retriable, async () => {
    const res = await conn.request(EndTxnApi, request, { version });
    return { code: res.errorCode };
  });
}

/**
 * What a read_committed consumer drops from a fetched partition, as Kafka's consumer does: the batches of
 * the aborted transactions the Fetch response lists (producer id, first offset), from that first offset up
 * to the producer's ABORT marker. Feed it the partition's batches in offset order.
 */
export class AbortedTransactions {
  private readonly pending: Array<{ producerId: bigint; firstOffset: bigint }>;
  private readonly open = new Set<bigint>();

  constructor(aborted: ReadonlyArray<{ producerId: bigint; firstOffset: bigint }> | null) {
    this.pending = [...(aborted ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  }

  /**
   * Whether the batch is to be dropped. `abortMarker` tells whether a control batch is an ABORT marker (it
   * closes its producer's aborted transaction); data batches pass it as false.
   */
  skip(batch: { baseOffset: bigint; lastOffset: bigint; producerId: bigint; isTransactional: boolean; isControl: boolean }, abortMarker = false): boolean {
    while (this.pending.length > 0 && this.pending[0]!.firstOffset <= batch.lastOffset) this.open.add(this.pending.shift()!.producerId);
    if (batch.isControl) {
      if (abortMarker) this.open.delete(batch.producerId);
      return true;
    }
    return batch.isTransactional && this.open.has(batch.producerId);
  }
}
