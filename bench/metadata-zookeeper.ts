/**
 * `npm run bench -- metadata-zookeeper [seconds] [writers]`: throughput of the ZooKeeper metadata store on
 * loopback, against a ZooKeeper 3.9 from the development-cluster launcher (compat/cluster). For `seconds`
 * each (default 5) it measures, with `writers` store instances (default 1; each its own ZooKeeper session,
 * as brokers are) writing concurrently:
 *
 *   put/s        puts of 100-byte values to distinct keys, one at a time per instance
 *   grouped/s    the same with 64 puts in flight per instance: group commit writes those queued together
 *                in one multi (one ZooKeeper log sync), each at its own revision
 *   txn/s        txns of a modRevision compare on one key and two puts
 *   get/s        gets (each a round trip to check the replica is current)
 *
 * Every change is one multi through one revision znode, so writers of different instances serialise there:
 * more writers add retries, not throughput.
 */
import { bookKeeperClasspath, startZooKeeper } from '../compat/cluster/index.js';
import { ZooKeeperMetadataStore } from '../src/metadata/zookeeper/index.js';

async function timed(seconds: number, workers: number, op: (worker: number, i: number) => Promise<unknown>): Promise<number> {
  const deadline = Date.now() + seconds * 1000;
  let done = 0;
  const started = Date.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      for (let i = 0; Date.now() < deadline; i++) {
        await op(w, i);
        done++;
      }
    }),
  );
  return done / ((Date.now() - started) / 1000);
}

export default async function metadataZooKeeper(args: string[]): Promise<void> {
  const seconds = Number(args[0] ?? 5);
  const writers = Number(args[1] ?? 1);
  if (bookKeeperClasspath() === undefined) {
    console.error('compat/bookkeeper is not built: see compat/cluster/README.md');
    process.exit(2);
  }
  const zk = await startZooKeeper();
  try {
    const connect = `${zk.connectString}/bench`;
    const stores = await Promise.all(Array.from({ length: writers }, () => ZooKeeperMetadataStore.open({ connect })));
    try {
      const value = Buffer.alloc(100, 1);
      await timed(1, writers, (w, i) => stores[w]!.put(`/bench/warm/${w}/${i}`, value)); // JIT warm-up, not counted
      const puts = await timed(seconds, writers, (w, i) => stores[w]!.put(`/bench/put/${w}/${i}`, value));
      const grouped = await timed(seconds, writers * 64, (w, i) => stores[w % writers]!.put(`/bench/grouped/${w}/${i}`, value));
      await stores[0]!.put('/bench/guard', value);
      const txns = await timed(seconds, writers, async (w, i) => {
        const guard = (await stores[w]!.get('/bench/guard'))!;
        return stores[w]!.txn({
          compare: [{ key: '/bench/guard', target: 'modRevision', op: '==', value: guard.modRevision }],
          success: [
            { type: 'put', key: '/bench/guard', value },
            { type: 'put', key: `/bench/txn/${w}/${i}`, value },
          ],
        });
      });
      const gets = await timed(seconds, writers, (w, i) => stores[w]!.get(`/bench/put/${w}/${i % 100}`));
      const revision = await stores[0]!.revision();
      console.log(
        JSON.stringify({ seconds, writers, putsPerSecond: Math.round(puts), groupedPutsPerSecond: Math.round(grouped), txnsPerSecond: Math.round(txns), getsPerSecond: Math.round(gets), revision }),
      );
    } finally {
      for (const s of stores) await s.close();
    }
  } finally {
    await zk.stop();
  }
}
