/**
 * Idempotent-producer state across a SIGKILL, with a real broker: the log snapshots it with every sealed
 * ledger (src/log/producer-snapshot.ts), so the restart loads the newest snapshot and replays only the
 * batches after it, and a retry of a batch written before the crash (in the snapshot or in the replayed
 * tail) is still answered with its original offset, as Kafka's ProducerStateManager does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ProduceApi, type ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { produceRequest } from '../support/requests.js';

const TOPIC = 'snapshotted';
/** Batches per ledger: 103 batches make 10 sealed ledgers and 3 batches in the open one. */
const ENTRIES_PER_LEDGER = 10;
const BATCHES = 103;
const RECORDS_PER_BATCH = 2;

interface ProducerStateLoaded {
  partition: string;
  snapshotOffset: number;
  replayedBatches: number;
  producers: number;
}

describe.sequential('producer state snapshots', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;
  let producerId: bigint;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'producer-snapshots' });
    const [created] = await client.createTopics([{ name: TOPIC, numPartitions: 1, configs: { 'ledgerline.segment.entries': String(ENTRIES_PER_LEDGER) } }]);
    expect(created!.errorCode).toBe(0);
    await client.waitForTopics([TOPIC]);
    await client.close();
    conn = await RawConnection.connect(broker.port);
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  const batch = (sequence: number): Promise<Buffer> =>
    buildRecordBatch(
      Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ value: `b${sequence}-${i}` })),
      { producerId, producerEpoch: 0, baseSequence: sequence * RECORDS_PER_BATCH },
    );

  async function produce(records: Buffer): Promise<{ errorCode: number; baseOffset: bigint }> {
    const res: ProduceResponse = await conn.request(ProduceApi, 9, produceRequest([{ topic: TOPIC, partition: 0, records }]));
    const p = res.responses[0]!.partitionResponses[0]!;
    return { errorCode: p.errorCode, baseOffset: p.baseOffset };
  }

  function loadedLines(): ProducerStateLoaded[] {
    return broker.logs
      .filter((l) => l.includes('"producer state loaded"'))
      .map((l) => JSON.parse(l) as ProducerStateLoaded)
      .filter((l) => l.partition === `${TOPIC}-0`);
  }

  it('answers a retry after a SIGKILL restart with the original offset, replaying only the batches after the newest snapshot', async () => {
    const init = await conn.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
    expect(init.errorCode).toBe(0);
    producerId = init.producerId;
    for (let s = 0; s < BATCHES; s++) {
      expect(await produce(await batch(s))).toEqual({ errorCode: 0, baseOffset: BigInt(s * RECORDS_PER_BATCH) });
    }

    await broker.restart();
    conn.destroy();
    conn = await RawConnection.connect(broker.port);

    // Partitions open on first use: the retry of the last batch opens it, and is answered with its offset.
    expect(loadedLines()).toEqual([]);
    expect(await produce(await batch(BATCHES - 1))).toEqual({ errorCode: 0, baseOffset: BigInt((BATCHES - 1) * RECORDS_PER_BATCH) });
    // The open loaded a snapshot taken at a ledger's end and replayed the batches after it, no others.
    const [loaded] = await waitFor('the partition open to load its producer state', () => (loadedLines().length > 0 ? loadedLines() : null));
    expect(loaded).toBeDefined();
    expect(loaded!.snapshotOffset).toBeGreaterThan(0);
    expect(loaded!.snapshotOffset % (ENTRIES_PER_LEDGER * RECORDS_PER_BATCH)).toBe(0);
    expect(loaded!.replayedBatches).toBe(BATCHES - loaded!.snapshotOffset / RECORDS_PER_BATCH);
    expect(loaded!.replayedBatches).toBeLessThan(BATCHES / 2);
    expect(loaded!.producers).toBe(1);

    // The last five batches are remembered, whichever side of the snapshot they lie on.
    for (const s of [BATCHES - 1, BATCHES - 5]) {
      expect(await produce(await batch(s))).toEqual({ errorCode: 0, baseOffset: BigInt(s * RECORDS_PER_BATCH) });
    }
    // The producer's next sequence follows on; a gap is refused, so the state is the producer's own.
    expect((await produce(await batch(BATCHES + 1))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
    expect(await produce(await batch(BATCHES))).toEqual({ errorCode: 0, baseOffset: BigInt(BATCHES * RECORDS_PER_BATCH) });
  });

  it('after a second SIGKILL, again replays only the batches after the newest snapshot', async () => {
    await broker.restart();
    conn.destroy();
    conn = await RawConnection.connect(broker.port);
    // The previous start sealed the fenced ledger and snapshotted the state at its end (206) in the
    // background; unless the kill came first, the one batch written since is the whole tail.
    const before = loadedLines().length;
    expect(await produce(await batch(BATCHES))).toEqual({ errorCode: 0, baseOffset: BigInt(BATCHES * RECORDS_PER_BATCH) });
    const loaded = (await waitFor('the partition open to load its producer state', () => (loadedLines().length > before ? loadedLines() : null))).at(-1)!;
    expect(loaded.snapshotOffset).toBeGreaterThan(0);
    expect(loaded.replayedBatches).toBe(BATCHES + 1 - loaded.snapshotOffset / RECORDS_PER_BATCH);
  });
});
