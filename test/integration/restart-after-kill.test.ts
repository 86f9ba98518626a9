/**
 * SIGKILL followed by an immediate restart on the same data directory, round after round: every restart
 * succeeds (the directory lock is a kernel lock, released as the killed process dies, never a pid file that
 * outlives it) and every acknowledged record is there. Each round kills the broker while acks=all produce
 * requests are in flight. LEDGERLINE_RESTART_ROUNDS sets the number of rounds (default 5;
 * `LEDGERLINE_RESTART_ROUNDS=100 npx vitest run test/integration/restart-after-kill.test.ts` for the full check).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readPartition } from '../support/records.js';

const ROUNDS = Number(process.env.LEDGERLINE_RESTART_ROUNDS ?? 5);
const TOPIC = 'restarts';

describe.sequential('SIGKILL then immediate restart', () => {
  let broker: BrokerProcess;
  const acked = new Map<number, string>();

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    const admin = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: 1 }]);
    expect(r!.errorCode).toBe(0);
    await admin.close();
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it(`restarts every time and keeps every acknowledged record (${ROUNDS} rounds)`, async () => {
    let seq = 0;
    const restartMs: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: `round-${round}`, requestTimeoutMs: 10_000 });
      // One acknowledged batch per round at least, then more in flight when the kill lands.
      let stop = false;
      const produceOne = async (): Promise<void> => {
        const value = `round${round}-${seq++}`;
        const [r] = await client.produce([{ topic: TOPIC, partition: 0, records: await buildRecordBatch([{ value }]) }], { acks: -1 });
        if (r!.errorCode !== 0) throw new Error(`produce failed with ${r!.errorCode}`);
        acked.set(Number(r!.baseOffset), value);
      };
      await produceOne();
      const loops = Array.from({ length: 4 }, async () => {
        while (!stop) await produceOne();
      });
      const settled = Promise.allSettled(loops);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 50)));
      stop = true;
      const started = performance.now();
      // kill() resolves once the process has exited; the restart follows at once.
      await broker.restart();
      restartMs.push(performance.now() - started);
      await settled;
      await client.close().catch(() => undefined);
      const reader = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: `verify-${round}` });
      try {
        const read = await readPartition(reader, TOPIC, 0);
        expect(read.map((r) => r.offset)).toEqual(read.map((_, i) => i));
        const byOffset = new Map(read.map((r) => [Number(r.offset), r.value!.toString()]));
        for (const [offset, value] of acked) {
          if (byOffset.get(offset) !== value) throw new Error(`round ${round}: offset ${offset} acknowledged ${value}, read ${byOffset.get(offset)}`);
        }
      } finally {
        await reader.close();
      }
      expect(broker.logs.join('\n')).not.toMatch(/LL_ERR_LEDGER_STORE_LOCKED/);
    }
    const sorted = [...restartMs].sort((a, b) => a - b);
    console.log(`${ROUNDS} SIGKILL + restart rounds: all succeeded; restart median ${sorted[Math.floor(sorted.length / 2)]!.toFixed(0)} ms, max ${sorted[sorted.length - 1]!.toFixed(0)} ms`);
  }, 60_000 + ROUNDS * 15_000);
});
