/**
 * The seam between the transaction coordinator and the partition logs that take its markers (KIP-98's
 * WriteTxnMarkers): the shapes of src/cluster/txn-markers.ts, whose LocalTxnMarkerWriter the broker passes
 * in. The coordinator only depends on `write`.
 */
import type { TxnMarkerEntry, TxnMarkerResult } from '../../cluster/txn-markers.js';

export type { TxnMarkerEntry, TxnMarkerResult };

/** Where the coordinator sends markers (Kafka's TransactionMarkerChannelManager). */
export interface TxnMarkerSink {
  write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]>;
}
