/**
 * EndTxn with transaction version 2 (KIP-890 part 2; Kafka's TransactionCoordinator.endTransaction for a client
 * whose version supports the epoch bump): what an EndTxn v5 does to a transactional id, decided from its state
 * alone, so the coordinator only has to write the result.
 *
 * ```
 *   Ongoing ──EndTxn(e)──► Prepare* at e+1 (markers written with e+1) ──► Complete* at e+1: answered (pid, e+1)
 *                          └ e exhausted (≥ 32766): Prepare* at 32767 with nextProducerId = a new id,
 *                            Complete* takes it at epoch 0: answered (new pid, 0)
 *   Empty / Complete* ──EndTxn(abort, e)──► PrepareAbort at e+1 with no partitions (fences a batch in flight)
 *   a retry of an end already done, with the epoch before its bump ──► NONE with the current (pid, epoch)
 * ```
 *
 * With TV2 the same epoch in Complete* is the next transaction's end, not a retry: a retry is recognised by its
 * epoch, one below the current (retryOnEpochBump), or the exhausted epoch of the previous producer id when the
 * current one is at 0 (retryOnOverflow).
 */
import { ErrorCode } from '../../../protocol/error-codes.js';
import { isEpochExhausted, MAX_EPOCH, NO_PRODUCER_ID, TV_2, TxnState, type TransactionMetadata, type TxnValue } from './state.js';

export interface EndTxnResult {
  readonly errorCode: number;
  /** EndTxn v5: the producer id and epoch the producer goes on with (-1 on an error). */
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

export type EndTxnV2Decision =
  /** Answer now: an error (producer id and epoch -1), or NONE for a retry with the current producer id and epoch. */
  | { readonly kind: 'answer'; readonly errorCode: number; readonly producerId: bigint; readonly producerEpoch: number }
  /** Write Prepare* with the bumped epoch; `newProducerId`: the epoch is exhausted, a new producer id is needed. */
  | { readonly kind: 'prepare'; readonly state: TxnState; readonly noPartitionAdded: boolean; readonly newProducerId: boolean };

const error = (errorCode: number): EndTxnV2Decision => ({ kind: 'answer', errorCode, producerId: -1n, producerEpoch: -1 });

export function decideEndTxnV2(txn: TransactionMetadata, producerId: bigint, producerEpoch: number, commit: boolean): EndTxnV2Decision {
  const v = txn.value;
  // The pending state is looked at first: a transition in progress may be moving to a new producer id.
  if (txn.pendingTransitionInProgress) return error(ErrorCode.CONCURRENT_TRANSACTIONS);
  const retryOnOverflow = v.previousProducerId === producerId && producerEpoch === MAX_EPOCH - 1 && v.producerEpoch === 0;
  const retryOnEpochBump = v.producerEpoch === producerEpoch + 1;
  if (v.producerId !== producerId && !retryOnOverflow) return error(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  let validEpoch: boolean;
  switch (v.state) {
    case TxnState.PrepareCommit:
    case TxnState.PrepareAbort:
      validEpoch = retryOnEpochBump;
      break;
    case TxnState.CompleteCommit:
    case TxnState.CompleteAbort:
      validEpoch = retryOnEpochBump || retryOnOverflow || producerEpoch === v.producerEpoch;
      break;
    default:
      validEpoch = producerEpoch === v.producerEpoch;
  }
  if (!validEpoch) return error(ErrorCode.PRODUCER_FENCED);
  const isRetry = retryOnEpochBump || retryOnOverflow;
  const retried: EndTxnV2Decision = { kind: 'answer', errorCode: ErrorCode.NONE, producerId: v.producerId, producerEpoch: v.producerEpoch };
  const prepare = (state: TxnState, noPartitionAdded: boolean): EndTxnV2Decision => ({ kind: 'prepare', state, noPartitionAdded, newProducerId: isEpochExhausted(v.producerEpoch) });
  switch (v.state) {
    case TxnState.Ongoing:
      return prepare(commit ? TxnState.PrepareCommit : TxnState.PrepareAbort, false);
    case TxnState.CompleteCommit:
      if (commit) return isRetry ? retried : error(ErrorCode.INVALID_TXN_STATE);
      return isRetry ? error(ErrorCode.INVALID_TXN_STATE) : prepare(TxnState.PrepareAbort, true);
    case TxnState.CompleteAbort:
      if (commit) return error(ErrorCode.INVALID_TXN_STATE);
      return isRetry ? retried : prepare(TxnState.PrepareAbort, true);
    case TxnState.PrepareCommit:
      return error(commit ? ErrorCode.CONCURRENT_TRANSACTIONS : ErrorCode.INVALID_TXN_STATE);
    case TxnState.PrepareAbort:
      return error(commit ? ErrorCode.INVALID_TXN_STATE : ErrorCode.CONCURRENT_TRANSACTIONS);
    case TxnState.Empty:
      // A TV2 client may abort a transaction the coordinator never heard of (its first produce failed before the
      // partition was added): the epoch is bumped all the same, fencing what may still be in flight.
      return commit ? error(ErrorCode.INVALID_TXN_STATE) : prepare(TxnState.PrepareAbort, true);
    default:
      return error(ErrorCode.INVALID_TXN_STATE);
  }
}

/**
 * The Prepare* of a decided end (Kafka's prepareAbortOrCommit with an epoch bump): epoch + 1, the epoch before it
 * kept as the last one, the current producer id as the previous one, and the next producer id when the epoch
 * was exhausted (-1 otherwise). An end with no partition added starts its transaction now.
 */
export function endTxnV2Transit(txn: TransactionMetadata, d: Extract<EndTxnV2Decision, { kind: 'prepare' }>, nextProducerId: bigint, now: number): TxnValue {
  const v = txn.value;
  return txn.transit(d.state, {
    producerEpoch: Math.min(v.producerEpoch + 1, MAX_EPOCH),
    lastProducerEpoch: v.producerEpoch,
    previousProducerId: v.producerId,
    nextProducerId,
    clientTransactionVersion: TV_2,
    partitions: d.noPartitionAdded ? new Map() : v.partitions,
    startTimestamp: d.noPartitionAdded ? now : v.startTimestamp,
    lastUpdateTimestamp: now,
  });
}

/** What EndTxn v5 answers once Prepare* is durable: the producer id and epoch Complete* will hold (prepareComplete). */
export function endTxnV2Answer(prepared: TxnValue): EndTxnResult {
  if (prepared.nextProducerId === NO_PRODUCER_ID) return { errorCode: ErrorCode.NONE, producerId: prepared.producerId, producerEpoch: prepared.producerEpoch };
  return { errorCode: ErrorCode.NONE, producerId: prepared.nextProducerId, producerEpoch: 0 };
}
