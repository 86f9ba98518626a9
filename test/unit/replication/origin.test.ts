/** Origin headers and committed reads of active-active replication (src/replication/origin.ts). */
import { describe, expect, it } from 'vitest';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { buildRecordBatch } from '../../../protocol/records/builder.js';
import { buildEndTxnMarkerBatch } from '../../../protocol/records/control.js';
import { CompressionType } from '../../../protocol/compression/index.js';
import { committedBatches, lastOriginOffsetIn, ORIGIN_HEADER, ORIGIN_OFFSET_HEADER, originOf, tagLocalRecords } from '../../../src/replication/origin.js';

async function batch(base: number, values: string[], o: { pid?: bigint; txn?: boolean; headers?: { key: string; value: Buffer }[]; compression?: number } = {}): Promise<Buffer> {
  const buf = await buildRecordBatch(
    values.map((v, i) => ({ key: v, value: v, timestamp: 1000 + i, headers: o.headers ?? [] })),
    { producerId: o.pid ?? -1n, producerEpoch: o.pid !== undefined ? 0 : -1, baseSequence: o.pid !== undefined ? 0 : -1, isTransactional: o.txn ?? false, compression: (o.compression ?? 0) as 0 },
  );
  RecordBatch.wrap(buf).setBaseOffset(base);
  return buf;
}

function marker(base: number, pid: bigint, commit: boolean): Buffer {
  const buf = buildEndTxnMarkerBatch({ producerId: pid, producerEpoch: 0, coordinatorEpoch: 0, commit, timestamp: 5 });
  RecordBatch.wrap(buf).setBaseOffset(base);
  return buf;
}

describe('committedBatches', () => {
  it("drops an aborted transaction's batches up to its ABORT marker, keeps committed and plain ones, never control batches", async () => {
    const records = Buffer.concat([
      await batch(0, ['p0']),
      await batch(1, ['t1'], { pid: 7n, txn: true }),
      await batch(2, ['u2'], { pid: 8n, txn: true }),
      marker(3, 7n, false),
      marker(4, 8n, true),
      await batch(5, ['t5'], { pid: 7n, txn: true }),
      marker(6, 7n, true),
    ]);
    const kept = committedBatches(records, [{ producerId: 7n, firstOffset: 1n }]);
    expect(kept.map((b) => b.baseOffsetNumber)).toEqual([0, 2, 5]);
  });
});

describe('tagLocalRecords', () => {
  it('tags the records written on the origin with its cluster id and their offsets there, keeps key, value, headers, timestamp and codec', async () => {
    const b = RecordBatch.wrap(await batch(40, ['x', 'y', 'z'], { headers: [{ key: 'h', value: Buffer.from('1') }], compression: CompressionType.GZIP }));
    const tagged = await tagLocalRecords(b, 'cluster-A', 41);
    expect(tagged).toMatchObject({ records: 2, firstOriginOffset: 41, lastOriginOffset: 42 });
    const out = RecordBatch.wrap(tagged.batch!);
    expect(out.compressionType).toBe(CompressionType.GZIP);
    const records = await out.readRecords();
    expect(records.map((r) => [r.value!.toString(), r.timestamp, originOf(r.headers)])).toEqual([
      ['y', 1001, { cluster: 'cluster-A', offset: 41 }],
      ['z', 1002, { cluster: 'cluster-A', offset: 42 }],
    ]);
    expect(records[0]!.headers[0]).toEqual({ key: 'h', value: Buffer.from('1') });
    expect(await lastOriginOffsetIn([out], 'cluster-A')).toBe(42);
    expect(await lastOriginOffsetIn([out], 'cluster-B')).toBe(-1);
  });

  it('copies nothing that was itself copied from elsewhere: no loops', async () => {
    const at = Buffer.alloc(8);
    at.writeBigInt64BE(7n);
    const copied = RecordBatch.wrap(await batch(0, ['from-c'], { headers: [{ key: ORIGIN_HEADER, value: Buffer.from('cluster-C') }, { key: ORIGIN_OFFSET_HEADER, value: at }] }));
    const tagged = await tagLocalRecords(copied, 'cluster-A');
    expect(tagged.batch).toBeNull();
    expect(tagged.copiedOrigins).toEqual(new Map([['cluster-C', 7]]));
    expect(tagged.copyRun).toEqual({ base: 0, origin: 'cluster-C', firstOrigin: 7 });
  });

  it('describes a batch of copies from one cluster at consecutive offsets as a run, and nothing else', async () => {
    const copy = async (base: number, origins: [string, number][]): Promise<RecordBatch> => {
      const buf = await buildRecordBatch(
        origins.map(([c, o]) => {
          const at = Buffer.alloc(8);
          at.writeBigInt64BE(BigInt(o));
          return { value: `${c}-${o}`, headers: [{ key: ORIGIN_HEADER, value: Buffer.from(c) }, { key: ORIGIN_OFFSET_HEADER, value: at }] };
        }),
      );
      RecordBatch.wrap(buf).setBaseOffset(base);
      return RecordBatch.wrap(buf);
    };
    const run = await copy(20, [['C', 5], ['C', 6], ['C', 7]]);
    expect((await tagLocalRecords(run, 'A')).copyRun).toEqual({ base: 20, origin: 'C', firstOrigin: 5 });
    // Read from the middle of it: the run starts where the reading does.
    expect((await tagLocalRecords(run, 'A', 21)).copyRun).toEqual({ base: 21, origin: 'C', firstOrigin: 6 });
    expect((await tagLocalRecords(await copy(20, [['C', 5], ['C', 7]]), 'A')).copyRun).toBeNull();
    expect((await tagLocalRecords(await copy(20, [['C', 5], ['B', 6]]), 'A')).copyRun).toBeNull();
    expect((await tagLocalRecords(RecordBatch.wrap(await batch(3, ['own'])), 'A')).copyRun).toBeNull();
  });
});
