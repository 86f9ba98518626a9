/**
 * `npm run bench -- membership [--brokers B] [--partitions N] [--ttl S]`: B MemberViews (src/cluster/member-view.ts)
 * in one process on one in-memory metadata store, with N partitions (100 topics), real time. Reports how long the
 * ownership layer takes to converge on the rendezvous rule: at start, after a broker joins, after one leaves
 * gracefully, after one dies (its lease of S seconds expires), and what `owns()` costs on the request path. The
 * partition layer is left out (a released partition closes at once), so the figures are the layer's own:
 * metadata round trips, watches and compare-and-sets, not log opens.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { MemberView } from '../src/cluster/member-view.js';
import { rendezvousOwner } from '../src/cluster/rendezvous.js';
import { openMemoryMetadataStore } from '../src/metadata/index.js';

interface Topic {
  readonly name: string;
  readonly partitions: number;
}

export default async function membership(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { brokers: { type: 'string', default: '3' }, partitions: { type: 'string', default: '10000' }, ttl: { type: 'string', default: '2' } } });
  const brokers = Number(values.brokers);
  const total = Number(values.partitions);
  const ttl = Number(values.ttl);
  const store = await openMemoryMetadataStore();
  const topicList: Topic[] = Array.from({ length: 100 }, (_, i) => ({ name: `t${i}`, partitions: Math.ceil(total / 100) }));
  const topics = { get: (n: string) => topicList.find((t) => t.name === n), list: () => topicList, addListener: () => undefined };
  const views = new Map<number, MemberView>();
  const join = async (id: number): Promise<void> => {
    const v = new MemberView({ store, nodeId: id, endpoints: () => [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + id }], topics, leaseTtlSeconds: ttl });
    views.set(id, v);
    await v.start();
  };
  const converged = (): boolean => {
    const ids = [...views.keys()].sort((a, b) => a - b);
    for (const t of topicList) {
      for (let p = 0; p < t.partitions; p++) {
        const want = rendezvousOwner(t.name, p, ids);
        for (const [id, v] of views) if (v.owns(t.name, p) !== (id === want)) return false;
      }
    }
    return true;
  };
  const until = async (what: string, from: number): Promise<void> => {
    const deadline = from + 60_000;
    while (!converged()) {
      if (performance.now() > deadline) throw new Error(`${what}: not converged within 60 s`);
      await new Promise((r) => setTimeout(r, 5));
    }
    console.log(`${what.padEnd(40)} ${(performance.now() - from).toFixed(0).padStart(6)} ms`);
  };
  const parts = topicList.reduce((n, t) => n + t.partitions, 0);
  console.log(`${brokers} brokers, ${parts} partitions, lease ${ttl} s, node ${process.version}`);
  let t0 = performance.now();
  await Promise.all(Array.from({ length: brokers }, (_, i) => join(i + 1)));
  await until(`start: ${brokers} brokers take every partition`, t0);
  t0 = performance.now();
  await join(brokers + 1);
  await until(`broker ${brokers + 1} joins`, t0);
  t0 = performance.now();
  const leaving = views.get(1)!;
  views.delete(1);
  await leaving.stop();
  await until('broker 1 leaves gracefully', t0);
  t0 = performance.now();
  const dying = views.get(2)!;
  views.delete(2);
  dying.abandon();
  await until(`broker 2 dies (lease ${ttl} s)`, t0);
  const v = views.get(3)!;
  const n = 2_000_000;
  let owned = 0;
  const s = performance.now();
  for (let i = 0; i < n; i++) if (v.owns(topicList[i % 100]!.name, i % topicList[0]!.partitions)) owned++;
  console.log(`owns() ${(((performance.now() - s) * 1e6) / n).toFixed(0)} ns per call (${owned} of ${n} owned)`);
  for (const x of views.values()) await x.stop();
  await store.close();
}
