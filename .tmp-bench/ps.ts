import { crc32c } from '../protocol/crc32c.js';
import { PartitionLog } from '../src/log/partition-log.js';
import { ChainKeys, loadChain } from '../src/log/chain.js';
import { ManualClock } from '../src/metadata/index.js';
import { buildBatch, openDiskStores, tempDir, removeDir } from '../test/unit/log/support.js';

const T0 = 1_700_000_000_000;
const N = Number(process.argv[2] ?? 50_000);
function idem(pid: number, seq: number): Buffer {
  const b = buildBatch(2, { baseTimestamp: T0 + seq, valueBytes: 100 });
  b.writeBigInt64BE(BigInt(pid), 43); b.writeInt16BE(0, 51); b.writeInt32BE(seq, 53);
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}
const dir = tempDir('ll-ps-');
const opts = (s: Awaited<ReturnType<typeof openDiskStores>>, extra = {}) => ({ topic: 't', partition: 0, ledgers: s.ledgers, metadata: s.metadata, retentionCheckIntervalMs: 0, clock: new ManualClock(T0 + 60_000), config: { segmentEntries: 5000 }, ...extra });
let s = await openDiskStores(dir);
let log = await PartitionLog.open(opts(s));
const seqs = new Map<number, number>();
for (let i = 0; i < N; i += 1000) {
  const ps: Promise<unknown>[] = [];
  for (let j = i; j < Math.min(N, i + 1000); j++) { const pid = 1 + (j % 50); const q = seqs.get(pid) ?? 0; seqs.set(pid, q + 2); ps.push(log.append(idem(pid, q))); }
  await Promise.all(ps);
}
// crash-like: do not close (leave the open ledger to be fenced); wait for snapshots to settle
await new Promise((r) => setTimeout(r, 500));
await s.close().catch(() => undefined);
for (const mode of ['snapshot', 'full']) {
  s = await openDiskStores(dir);
  if (mode === 'full') {
    const chain = await loadChain(s.metadata, new ChainKeys('t', 0));
    for (const l of chain.ledgers) if (l.state === 'sealed' && l.producerSnapshotLedgerId !== undefined) await s.ledgers.delete(l.producerSnapshotLedgerId).catch(() => undefined);
  }
  const t = performance.now();
  log = await PartitionLog.open(opts(s, { logger: { warn() {} } }));
  const ms = performance.now() - t;
  console.log(mode, { openMs: ms.toFixed(1), ...log.stats.producerState, ms: log.stats.producerState.ms.toFixed(1), batches: log.stats.batches });
  await log.close();
  await s.close();
}
removeDir(dir);
