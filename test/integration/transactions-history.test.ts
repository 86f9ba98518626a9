/**
 * A history checker for transactions, in the spirit of Jepsen's Kafka tests: several transactional producers
 * (kafkajs) write transactions of 1-6 records over the partitions of a topic and commit or abort at random,
 * while the broker is killed with SIGKILL and restarted now and then. Every transaction's outcome as its producer
 * saw it is recorded: committed (commit acknowledged), aborted (abort acknowledged) or unknown (an error
 * somewhere in between; the next InitProducerId of its transactional id ends it either way).
 *
 * Afterwards every partition is read with read_committed, and checked:
 *   - no record of an aborted transaction is visible;
 *   - no transaction is torn: a transaction is visible with all of its records or with none;
 *   - every committed transaction is visible, whole;
 *   - per partition, the transactions of one producer appear in the order they were written.
 * The read is the Java consumer's read_committed (test/support/read-committed.ts), which takes the aborted
 * transactions of a fetch in first-offset order. kafkajs 2.2.4 cannot be the reader here: it takes them in the
 * order the broker lists them (by marker offset, as Kafka lists them too) as if they were in first-offset
 * order, and so delivers records of an aborted transaction that began before another producer's aborted one
 * ended (compat/FINDINGS.md).
 *
 * A second history runs consume-transform-produce loops, Kafka's exactly-once pattern (KIP-98, KIP-447): each
 * worker reads an input partition from its group's committed offset (OffsetFetch with require_stable), and in
 * one transaction writes what it read to an output topic and commits the input offsets (TxnOffsetCommit),
 * aborting one transaction in four on purpose; after an error it starts again from the committed offset.
 * Broker SIGKILLs land in between. Afterwards the output holds every input record exactly once (read_committed),
 * and the group's committed offsets are the input's end.
 *
 * LEDGERLINE_TXN_HISTORY_MS (default 20 s), LEDGERLINE_TXN_PRODUCERS (4), LEDGERLINE_TXN_KILLS (2) and
 * LEDGERLINE_TXN_CTP_RECORDS (600 input records per partition) size the run: `LEDGERLINE_TXN_HISTORY_MS=600000 LEDGERLINE_TXN_KILLS=20 npx vitest run test/integration/transactions-history.test.ts`.
 */
import kafkajs from 'kafkajs';
import type { Kafka as KafkaType, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { OffsetFetchApi } from '../../protocol/messages/009-offset-fetch.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readCommitted } from '../support/read-committed.js';
import { decodeRecordSet } from '../support/records.js';

const { Kafka, logLevel } = kafkajs;

const DURATION_MS = Number(process.env.LEDGERLINE_TXN_HISTORY_MS ?? 20_000);
const PRODUCERS = Number(process.env.LEDGERLINE_TXN_PRODUCERS ?? 4);
const KILLS = Number(process.env.LEDGERLINE_TXN_KILLS ?? 2);
/** Input records per partition of the consume-transform-produce history. */
const PER_PARTITION = Number(process.env.LEDGERLINE_TXN_CTP_RECORDS ?? 600);
const TOPIC = 'txn-history';
const PARTITIONS = 3;

type Outcome = 'committed' | 'aborted' | 'unknown';

interface Txn {
  readonly producer: number;
  readonly seq: number;
  readonly records: ReadonlyArray<{ partition: number; index: number }>;
  outcome: Outcome;
}

interface Value {
  p: number;
  t: number;
  i: number;
  n: number;
}

function until(deadlineMs: number, what: string): void {
  if (Date.now() > deadlineMs) throw new Error(`timed out waiting for ${what}`);
}

describe.sequential('transactions: history checker with broker SIGKILLs', () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;

  beforeAll(async () => {
    broker = await BrokerProcess.start({
      configs: {
        'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000',
        'offsets.topic.num.partitions': '3',
        'transaction.state.log.num.partitions': '3',
      },
    });
    const admin = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    const [r] = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS }]);
    expect(r!.errorCode).toBe(0);
    await admin.close();
    kafka = new Kafka({ clientId: 'txn-history', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100, maxRetryTime: 2_000 } });
  });

  afterAll(async () => {
    await broker?.stop();
  });

  it(`sees no aborted, torn, lost or reordered transaction (${PRODUCERS} producers, ${DURATION_MS} ms, ${KILLS} SIGKILLs)`, async () => {
    const txns: Txn[] = [];
    let stop = false;
    const connectProducer = async (id: number): Promise<Producer> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const p = kafka.producer({ transactionalId: `history-${id}`, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 10_000 });
        try {
          await p.connect();
          return p;
        } catch (err) {
          await p.disconnect().catch(() => undefined);
          until(deadline, `producer ${id} to connect (${String(err)})`);
        }
      }
    };
    const run = async (id: number): Promise<void> => {
      let producer = await connectProducer(id);
      for (let seq = 0; !stop; seq++) {
        const n = 1 + Math.floor(Math.random() * 6);
        const records = Array.from({ length: n }, (_, index) => ({ partition: Math.floor(Math.random() * PARTITIONS), index }));
        const txn: Txn = { producer: id, seq, records, outcome: 'unknown' };
        txns.push(txn);
        const commit = Math.random() < 0.7;
        try {
          const tx = await producer.transaction();
          try {
            await tx.send({
              topic: TOPIC,
              acks: -1,
              messages: records.map((r) => ({ partition: r.partition, value: JSON.stringify({ p: id, t: seq, i: r.index, n } satisfies Value) })),
            });
          } catch (err) {
            await tx.abort().then(() => (txn.outcome = 'aborted'), () => undefined);
            throw err;
          }
          if (commit) {
            await tx.commit();
            txn.outcome = 'committed';
          } else {
            await tx.abort();
            txn.outcome = 'aborted';
          }
        } catch {
          // The transaction's fate is settled by the next instance of this transactional id (InitProducerId
          // aborts an ongoing transaction) or by the transaction timeout.
          await producer.disconnect().catch(() => undefined);
          if (stop) return;
          producer = await connectProducer(id);
        }
      }
      await producer.disconnect().catch(() => undefined);
    };
    const producers = Array.from({ length: PRODUCERS }, (_, id) => run(id));
    const failures: unknown[] = [];
    producers.forEach((p) => p.catch((err: unknown) => failures.push(err)));
    for (let k = 0; k < KILLS; k++) {
      const killAt = Date.now() + DURATION_MS / (KILLS + 1);
      while (Date.now() < killAt && failures.length === 0) await new Promise((r) => setTimeout(r, 50));
      await broker.restart();
    }
    const endAt = Date.now() + DURATION_MS / (KILLS + 1);
    while (Date.now() < endAt && failures.length === 0) await new Promise((r) => setTimeout(r, 50));
    stop = true;
    await Promise.allSettled(producers);
    expect(failures).toEqual([]);

    // Every transaction ends: a producer killed mid-transaction leaves it to the transaction timeout.
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'history-check' });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const entries = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, timestamp: -1n }));
      const stable = await client.listOffsets(entries, { isolationLevel: 1 });
      const high = await client.listOffsets(entries, { isolationLevel: 0 });
      if (stable.every((s, i) => s.errorCode === 0 && s.offset === high[i]!.offset)) break;
      until(deadline, 'the last stable offset to reach the high watermark on every partition');
      await new Promise((r) => setTimeout(r, 200));
    }

    const visible = new Map<string, Array<{ partition: number; offset: number; v: Value }>>();
    const perPartition: Array<Array<{ offset: number; v: Value }>> = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const read = await readCommitted(client, TOPIC, partition);
      const rows = read.records.map((r) => ({ offset: r.offset, v: JSON.parse(r.value!.toString()) as Value }));
      perPartition.push(rows);
      for (const row of rows) {
        const key = `${row.v.p}/${row.v.t}`;
        const list = visible.get(key) ?? [];
        list.push({ partition, ...row });
        visible.set(key, list);
      }
    }
    await client.close();

    const anomalies: string[] = [];
    const byKey = new Map(txns.map((t) => [`${t.producer}/${t.seq}`, t]));
    for (const [key, rows] of visible) {
      const txn = byKey.get(key);
      if (!txn) {
        anomalies.push(`${key}: visible but never written`);
        continue;
      }
      if (txn.outcome === 'aborted') anomalies.push(`${key}: aborted, yet ${rows.length} of its records are visible`);
      const indexes = new Set(rows.map((r) => r.v.i));
      if (rows.length !== txn.records.length || indexes.size !== txn.records.length) {
        anomalies.push(`${key}: torn: ${rows.length} of ${txn.records.length} records visible`);
      }
      for (const r of rows) {
        if (txn.records[r.v.i]?.partition !== r.partition) anomalies.push(`${key}: record ${r.v.i} visible in partition ${r.partition}, written to ${txn.records[r.v.i]?.partition}`);
      }
    }
    for (const t of txns) {
      if (t.outcome === 'committed' && !visible.has(`${t.producer}/${t.seq}`)) anomalies.push(`${t.producer}/${t.seq}: committed, not visible`);
    }
    perPartition.forEach((rows, partition) => {
      const last = new Map<number, number>();
      for (const { offset, v } of rows) {
        if ((last.get(v.p) ?? -1) > v.t) anomalies.push(`partition ${partition} offset ${offset}: transaction ${v.p}/${v.t} after ${v.p}/${last.get(v.p)}`);
        last.set(v.p, v.t);
      }
    });

    const counts = { committed: 0, aborted: 0, unknown: 0 };
    for (const t of txns) counts[t.outcome]++;
    console.log(
      `transactions: ${txns.length} written (${counts.committed} committed, ${counts.aborted} aborted, ${counts.unknown} unknown), ` +
        `${visible.size} visible, ${perPartition.reduce((n, rows) => n + rows.length, 0)} records read, ${anomalies.length} anomalies`,
    );
    expect(anomalies).toEqual([]);
    expect(counts.committed).toBeGreaterThan(0);
    expect(counts.aborted).toBeGreaterThan(0);
  }, 120_000 + DURATION_MS * 2);

  it(`consume-transform-produce: every input record in the output exactly once (${KILLS} SIGKILLs)`, async () => {
    const IN = 'ctp-in';
    const OUT = 'ctp-out';
    const GROUP = 'ctp';
    const admin = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'ctp-setup' });
    for (const [name, partitions] of [[IN, PARTITIONS], [OUT, PARTITIONS]] as const) {
      const [r] = await admin.createTopics([{ name, numPartitions: partitions }]);
      expect(r!.errorCode).toBe(0);
    }
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let i = 0; i < PER_PARTITION; i += 100) {
        const batch = await buildRecordBatch(Array.from({ length: 100 }, (_, k) => ({ value: `in-${partition}-${i + k}` })));
        const [r] = await admin.produce([{ topic: IN, partition, records: batch }], { acks: -1 });
        expect(r!.errorCode).toBe(0);
      }
    }
    await admin.close();

    /** Retries `op` with a fresh client until it succeeds (the broker restarts under it). */
    const withClient = async <T>(what: string, op: (c: KafkaClient) => Promise<T>): Promise<T> => {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const c = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'ctp-reader', requestTimeoutMs: 5_000 }).catch(() => null);
        try {
          if (c) return await op(c);
        } catch (err) {
          until(deadline, `${what} (${String(err)})`);
        } finally {
          await c?.close().catch(() => undefined);
        }
        until(deadline, what);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    // What a read_committed consumer starts from: the committed offset, waiting out pending transactional ones.
    const committed = (partition: number): Promise<number> =>
      withClient(`the committed offset of ${IN}-${partition}`, async (c) => {
        for (;;) {
          const conn = await c.cluster.anyConnection();
          const res = await conn.request(OffsetFetchApi, { ...OffsetFetchApi.request.create(), groups: [{ groupId: GROUP, memberId: null, memberEpoch: -1, topics: [{ name: IN, topicId: ZERO_UUID, partitionIndexes: [partition] }] }], requireStable: true }, { version: 8 });
          const g = res.groups[0]!;
          const p = g.topics[0]?.partitions[0];
          const code = g.errorCode || (p?.errorCode ?? 0);
          if (code === ErrorCode.UNSTABLE_OFFSET_COMMIT) {
            await new Promise((r) => setTimeout(r, 50));
            continue;
          }
          if (code !== 0) throw new Error(`OffsetFetch answered ${code}`);
          return Number(p!.committedOffset < 0n ? 0n : p!.committedOffset);
        }
      });
    const read = (partition: number, offset: number): Promise<Array<{ offset: number; value: string }>> =>
      withClient(`a read of ${IN}-${partition}`, async (c) => {
        const [r] = await c.fetch([{ topic: IN, partition, offset: BigInt(offset), maxBytes: 64 * 1024 }], { maxWaitMs: 0, minBytes: 0, isolationLevel: 1 });
        if (r!.errorCode !== 0) throw new Error(`fetch answered ${r!.errorCode}`);
        const { records } = await decodeRecordSet(r!.records);
        return records.filter((x) => x.offset >= offset).slice(0, 1 + Math.floor(Math.random() * 40)).map((x) => ({ offset: x.offset, value: x.value!.toString() }));
      });

    let aborted = 0;
    let restarts = 0;
    const worker = async (partition: number): Promise<void> => {
      const connect = async (): Promise<Producer> => {
        const deadline = Date.now() + 60_000;
        for (;;) {
          const p = kafka.producer({ transactionalId: `ctp-${partition}`, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 10_000 });
          try {
            await p.connect();
            return p;
          } catch (err) {
            await p.disconnect().catch(() => undefined);
            until(deadline, `producer ctp-${partition} to connect (${String(err)})`);
          }
        }
      };
      let producer = await connect();
      let position = await committed(partition);
      while (position < PER_PARTITION) {
        const records = await read(partition, position);
        if (records.length === 0) continue;
        const next = records[records.length - 1]!.offset + 1;
        try {
          const tx = await producer.transaction();
          try {
            await tx.send({ topic: OUT, acks: -1, messages: records.map((r) => ({ partition: r.offset % PARTITIONS, value: r.value })) });
            await tx.sendOffsets({ consumerGroupId: GROUP, topics: [{ topic: IN, partitions: [{ partition, offset: String(next) }] }] });
          } catch (err) {
            await tx.abort().catch(() => undefined);
            throw err;
          }
          if (Math.random() < 0.25) {
            await tx.abort();
            aborted++;
          } else {
            await tx.commit();
            position = next;
          }
        } catch {
          // Where a consumer-transform-produce application starts again: a new producer instance (which fences
          // the old one and aborts its transaction) and the committed offset.
          restarts++;
          await producer.disconnect().catch(() => undefined);
          producer = await connect();
          position = await committed(partition);
        }
      }
      await producer.disconnect().catch(() => undefined);
    };
    const workers = Array.from({ length: PARTITIONS }, (_, p) => worker(p));
    let done = false;
    const all = Promise.all(workers).finally(() => (done = true));
    for (let k = 0; k < KILLS && !done; k++) {
      const killAt = Date.now() + 1_500 + Math.random() * 2_500;
      while (Date.now() < killAt && !done) await new Promise((r) => setTimeout(r, 50));
      if (!done) await broker.restart();
    }
    await all;

    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'ctp-check' });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const entries = Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: OUT, partition, timestamp: -1n }));
      const stable = await client.listOffsets(entries, { isolationLevel: 1 });
      const high = await client.listOffsets(entries, { isolationLevel: 0 });
      if (stable.every((x, i) => x.errorCode === 0 && x.offset === high[i]!.offset)) break;
      until(deadline, `the last stable offset of ${OUT} to reach its high watermark`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const seen = new Map<string, number>();
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (const r of (await readCommitted(client, OUT, partition)).records) {
        const v = r.value!.toString();
        seen.set(v, (seen.get(v) ?? 0) + 1);
      }
    }
    await client.close();
    const anomalies: string[] = [];
    for (let partition = 0; partition < PARTITIONS; partition++) {
      for (let i = 0; i < PER_PARTITION; i++) {
        const n = seen.get(`in-${partition}-${i}`) ?? 0;
        if (n !== 1) anomalies.push(`in-${partition}-${i} in the output ${n} times`);
      }
      expect(await committed(partition)).toBe(PER_PARTITION);
    }
    console.log(`consume-transform-produce: ${PARTITIONS * PER_PARTITION} input records, ${seen.size} distinct in the output, ${aborted} transactions aborted on purpose, ${restarts} restarts after errors, ${anomalies.length} anomalies`);
    expect(anomalies.slice(0, 20)).toEqual([]);
    expect(seen.size).toBe(PARTITIONS * PER_PARTITION);
    expect(aborted).toBeGreaterThan(0);
  }, 180_000 + PER_PARTITION * 100);
});
