/**
 * A transactional id's state, as Kafka's TransactionMetadata keeps it (KIP-98), and the state machine over it.
 *
 * ```
 *                  InitProducerId                AddPartitions/AddOffsets
 *   (none) ───────────────────────► Empty ─────────────────────────────► Ongoing ◄──┐ more partitions
 *                                    ▲ ▲                                  │  │ │ ───┘
 *        InitProducerId (epoch bump) │ │               EndTxn(commit)     │  │ │ EndTxn(abort), timeout,
 *              ┌─────────────────────┘ │           ┌──────────────────────┘  │ │ InitProducerId (fence:
 *              │                       │           ▼                         │ ▼ PrepareEpochFence, epoch+1)
 *   CompleteCommit ◄──markers written── PrepareCommit        PrepareAbort ◄──┘
 *   CompleteAbort  ◄──markers written──────────────────────────┘
 *   Empty / Complete* ──transactional.id.expiration.ms idle──► Dead (tombstone, removed)
 * ```
 *
 * A change is first computed as a transit (the next value), made durable in __transaction_state, and only
 * then applied; while it is being written the id has a pending state and other requests for it answer
 * CONCURRENT_TRANSACTIONS (Kafka's pendingTransitionInProgress). PrepareEpochFence is never written: the fence
 * is written as the PrepareAbort it leads to, with the bumped epoch.
 */

/** Kafka's TransactionState ids (the transactionStatus of TransactionLogValue) and names (Describe/ListTransactions). */
export const TxnState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const;
export type TxnState = (typeof TxnState)[keyof typeof TxnState];

export const TXN_STATE_NAMES: readonly string[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

export function txnStateName(s: TxnState): string {
  return TXN_STATE_NAMES[s]!;
}

/** Kafka's TransactionState.fromName. */
export function txnStateFromName(name: string): TxnState | undefined {
  const i = TXN_STATE_NAMES.indexOf(name);
  return i < 0 ? undefined : (i as TxnState);
}

/** Kafka's RecordBatch.NO_PRODUCER_ID / NO_PRODUCER_EPOCH. */
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const MAX_EPOCH = 32767;

/** Kafka's TransactionMetadata.isEpochExhausted: the epoch can no longer be bumped safely (a fence needs one more). */
export function isEpochExhausted(epoch: number): boolean {
  return epoch >= MAX_EPOCH - 1;
}

/** Kafka's TransactionVersion feature levels: TV_2 bumps the epoch at every transaction end (KIP-890 part 2). */
export const TV_0 = 0;
export const TV_2 = 2;

/** Kafka's TransactionVersion.supportsEpochBump. */
export function supportsEpochBump(clientTransactionVersion: number): boolean {
  return clientTransactionVersion >= TV_2;
}

/** A transactional id's durable fields (one TransactionLogValue), immutable. */
export interface TxnValue {
  readonly producerId: bigint;
  /**
   * The producer id before the last change of it (Kafka's prevProducerId): written with transaction version 2
   * (records.ts), in memory only before, as Kafka writes it with TV1.
   */
  readonly previousProducerId: bigint;
  /**
   * KIP-890 part 2: the producer id a transaction ending with an exhausted epoch hands over to (Kafka's
   * nextProducerId), set on its Prepare* state and taken by its Complete* state at epoch 0; -1 otherwise.
   */
  readonly nextProducerId: bigint;
  /**
   * The client transaction version of the transaction (Kafka's clientTransactionVersion, TransactionLogValue's
   * tagged field): 2 once a TV2 request (AddPartitionsToTxn v5 from a partition leader, EndTxn v5) touched it.
   */
  readonly clientTransactionVersion: number;
  readonly producerEpoch: number;
  /** In memory only, as Kafka: the epoch before the last bump, so that a retried InitProducerId gets the same answer. */
  readonly lastProducerEpoch: number;
  readonly timeoutMs: number;
  readonly state: TxnState;
  /** topic → partitions of the ongoing (or preparing) transaction. */
  readonly partitions: ReadonlyMap<string, ReadonlySet<number>>;
  readonly startTimestamp: number;
  readonly lastUpdateTimestamp: number;
}

/** Kafka's TransactionState.validPreviousStates: which states each state may follow. */
const VALID_PREVIOUS: Readonly<Record<TxnState, readonly TxnState[]>> = {
  [TxnState.Empty]: [TxnState.Empty, TxnState.CompleteCommit, TxnState.CompleteAbort],
  [TxnState.Ongoing]: [TxnState.Ongoing, TxnState.Empty, TxnState.CompleteCommit, TxnState.CompleteAbort],
  [TxnState.PrepareCommit]: [TxnState.Ongoing],
  // Empty and Complete*: a TV2 client's abort of no transaction bumps the epoch through PrepareAbort (KIP-890 part 2).
  [TxnState.PrepareAbort]: [TxnState.Ongoing, TxnState.PrepareEpochFence, TxnState.Empty, TxnState.CompleteCommit, TxnState.CompleteAbort],
  [TxnState.CompleteCommit]: [TxnState.PrepareCommit],
  [TxnState.CompleteAbort]: [TxnState.PrepareAbort],
  [TxnState.Dead]: [TxnState.Empty, TxnState.CompleteCommit, TxnState.CompleteAbort],
  [TxnState.PrepareEpochFence]: [TxnState.Ongoing],
};

export function isValidTransition(from: TxnState, to: TxnState): boolean {
  return VALID_PREVIOUS[to].includes(from);
}

/** One transactional id held by a __transaction_state shard. */
export class TransactionMetadata {
  /** The state being written, if any (Kafka's pendingState). */
  pending: TxnState | null = null;

  constructor(
    readonly transactionalId: string,
    public value: TxnValue,
  ) {}

  get state(): TxnState {
    return this.value.state;
  }

  get pendingTransitionInProgress(): boolean {
    return this.pending !== null;
  }

  hasPartition(topic: string, partition: number): boolean {
    return this.value.partitions.get(topic)?.has(partition) ?? false;
  }

  /** The transit to `state` with `changes`; throws on a transition Kafka's state machine forbids (a bug). */
  transit(state: TxnState, changes: Partial<Omit<TxnValue, 'state'>>): TxnValue {
    if (!isValidTransition(this.value.state, state)) {
      throw new Error(`transactional id ${this.transactionalId}: no transition from ${txnStateName(this.value.state)} to ${txnStateName(state)}`);
    }
    return { ...this.value, ...changes, state };
  }
}

/** The partitions of `a` and those of `b`, merged. */
export function unionPartitions(a: ReadonlyMap<string, ReadonlySet<number>>, b: ReadonlyArray<{ topic: string; partition: number }>): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const [t, ps] of a) out.set(t, new Set(ps));
  for (const { topic, partition } of b) {
    let s = out.get(topic);
    if (!s) out.set(topic, (s = new Set()));
    s.add(partition);
  }
  return out;
}

export function partitionList(m: ReadonlyMap<string, ReadonlySet<number>>): Array<{ topic: string; partition: number }> {
  const out: Array<{ topic: string; partition: number }> = [];
  for (const [topic, ps] of m) for (const partition of ps) out.push({ topic, partition });
  return out;
}
