/**
 * `npm run cluster -- up --bookies 3 --brokers 3` and `down`, as a developer runs them: ZooKeeper, three bookies
 * and three Ledgerline brokers (one cluster, RF 3, min.insync 2) outlive the command; kafkajs bootstrapped from
 * any one broker sees all three, creates a topic, produces and consumes; `down` stops every process it started.
 * Skipped without the BookKeeper classpath unless LEDGERLINE_REQUIRE_BOOKKEEPER=1.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { bookKeeperClasspath, requireBookKeeper } from '../../compat/cluster/index.js';
import { alive } from '../../compat/cluster/process.js';

const available = bookKeeperClasspath() !== undefined;

function cluster(args: string[], timeoutMs: number): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', 'compat/cluster/main.ts', ...args], { encoding: 'utf8', timeout: timeoutMs });
}

describe('npm run cluster', () => {
  it.skipIf(!available && !requireBookKeeper())('up --bookies 3 --brokers 3 serves Kafka clients from any broker, and down stops it all', async () => {
    expect(available, 'compat/bookkeeper is built').toBe(true);
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-cluster-command-'));
    let pids: number[] = [];
    try {
      const up = cluster(['up', '--bookies', '3', '--brokers', '3', '--dir', dir], 240_000);
      expect(up.status, up.stderr).toBe(0);
      const state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as { processes: { name: string; pid: number }[] };
      pids = state.processes.map((p) => p.pid);
      expect(state.processes.map((p) => p.name)).toEqual(['zookeeper', 'bookie-1', 'bookie-2', 'bookie-3', 'broker-1', 'broker-2', 'broker-3']);
      const bootstrap = /^bootstrap\.servers=(.*)$/m.exec(up.stdout)![1]!.split(',');
      expect(bootstrap).toHaveLength(3);

      // Bootstrapped from the last broker alone: Metadata names the other two.
      const kafka = new Kafka({ brokers: [bootstrap[2]!], clientId: 'cluster-command', logLevel: logLevel.NOTHING, retry: { retries: 10 } });
      const admin = kafka.admin();
      await admin.connect();
      const deadline = Date.now() + 30_000;
      let brokers: number[] = [];
      while (Date.now() < deadline && brokers.length < 3) {
        brokers = (await admin.describeCluster()).brokers.map((b) => b.nodeId).sort();
        if (brokers.length < 3) await new Promise((r) => setTimeout(r, 200));
      }
      expect(brokers).toEqual([1, 2, 3]);
      await admin.createTopics({ topics: [{ topic: 'dev', numPartitions: 3 }], waitForLeaders: true });
      const [described] = (await admin.fetchTopicMetadata({ topics: ['dev'] })).topics;
      for (const p of described!.partitions) expect(p.replicas).toHaveLength(3);
      await admin.disconnect();

      const producer = kafka.producer({ idempotent: true });
      await producer.connect();
      const values = Array.from({ length: 30 }, (_, i) => `v${i}`);
      await producer.send({ topic: 'dev', acks: -1, messages: values.map((value, i) => ({ key: `k${i}`, value })) });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: 'dev-readers' });
      await consumer.connect();
      await consumer.subscribe({ topic: 'dev', fromBeginning: true });
      const seen: string[] = [];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`read ${seen.length} of ${values.length} records`)), 60_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            seen.push(message.value!.toString());
            if (seen.length === values.length) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
      await consumer.disconnect();
      expect(seen.sort()).toEqual([...values].sort());

      const down = cluster(['down', '--dir', dir], 120_000);
      expect(down.status, down.stderr).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
    } finally {
      for (const pid of pids.filter(alive)) {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  }, 420_000);
});
