/**
 * Child process of crash.test.ts: `node --import tsx crash-child.ts <dir>`. Opens (takes over) partition
 * crash-0 on the real local ledger store and the SQLite metadata store in <dir>, then keeps 32 appends in
 * flight until it is killed. Small ledgers (20 batches) make rollovers happen all along. Each acknowledged
 * append is printed as `ack <baseOffset> <lastOffset>` once its promise resolved; stdout to a pipe is
 * synchronous on Linux, so a printed line was acknowledged before the process could take another step.
 */
import { PartitionLog } from '../../../src/log/partition-log.js';
import { buildBatch, openDiskStores } from './support.js';

const [dir] = process.argv.slice(2);
const stores = await openDiskStores(dir!);
const log = await PartitionLog.open({
  topic: 'crash',
  partition: 0,
  ledgers: stores.ledgers,
  metadata: stores.metadata,
  config: { segmentEntries: 20 },
  retentionCheckIntervalMs: 0,
});
process.stdout.write(`open ${log.highWatermark} ${log.leaderEpoch}\n`);

let n = 0;
let inflight = 0;
const pump = (): void => {
  while (inflight < 32) {
    inflight++;
    log.append(buildBatch(1 + (n++ % 3))).then(
      (r) => {
        process.stdout.write(`ack ${r.baseOffset} ${r.lastOffset}\n`);
        inflight--;
        pump();
      },
      (err: unknown) => {
        process.stderr.write(`append failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  }
};
pump();
