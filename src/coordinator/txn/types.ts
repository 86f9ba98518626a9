/**
 * The seam between the transaction coordinator and the partition logs that take its markers (KIP-98's
 * WriteTxnMarkers). These are the shapes of src/cluster/txn-markers.ts (the log side's LocalTxnMarkerWriter),
 * declared here identically until that module exists; the coordinator only depends on `write`.
 */

/** One transaction's markers: a COMMIT or ABORT control batch for each of its partitions. */
export interface TxnMarkerEntry {
  readonly producerId: bigint;
  readonly producerEpoch: number;
  readonly coordinatorEpoch: number;
  readonly commit: boolean;
  readonly partitions: ReadonlyArray<{ readonly topic: string; readonly partition: number }>;
}

/** What became of each partition's marker (NONE: written and durable). */
export interface TxnMarkerResult {
  readonly producerId: bigint;
  readonly partitions: Array<{ topic: string; partition: number; errorCode: number }>;
}

/** Where the coordinator sends markers (Kafka's TransactionMarkerChannelManager). */
export interface TxnMarkerSink {
  write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]>;
}
