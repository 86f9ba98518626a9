/**
 * What the broker does with input no well-behaved client sends, over raw sockets: truncated, oversized,
 * negative and empty frames, unknown API keys and versions (and ApiVersions' KIP-511 answer), request
 * bodies that do not parse, record batches that are corrupt or invalid, a client that pipelines without
 * ever reading (backpressure: the broker stops reading it and its memory stays bounded), pipelined
 * requests answered in order, and acks=0. After each case a second, well-behaved client is still served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { ListOffsetsApi } from '../../protocol/messages/002-list-offsets.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { ProduceApi, type ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { BatchField, buildRecordBatch, buildRecordBatchSync } from '../../protocol/records/index.js';
import { crc32c } from '../../protocol/crc32c.js';
import { encodeRequestFrame } from '../../protocol/headers.js';
import { Writer } from '../../protocol/wire/writer.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { fetchRequest, metadataRequest, produceRequest } from '../support/requests.js';

const MAX_REQUEST = 4 * 1024 * 1024;

/** A frame with any API key and version: size | header v2 (or v1) | body. */
function frame(apiKey: number, apiVersion: number, correlationId: number, body: Buffer, headerVersion = 2): Buffer {
  const w = new Writer(64);
  w.int32(0);
  w.int16(apiKey);
  w.int16(apiVersion);
  w.int32(correlationId);
  w.nullableString('bad-input');
  if (headerVersion >= 2) w.uvarint(0);
  w.raw(body);
  const out = w.toBuffer();
  out.writeInt32BE(out.length - 4, 0);
  return out;
}

function sizePrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n, 0);
  return b;
}

/** Recomputes the CRC of a batch after its bytes were edited. */
function fixCrc(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch.subarray(BatchField.ATTRIBUTES)) >>> 0, BatchField.CRC);
  return batch;
}

describe.sequential('bad input over raw sockets', () => {
  let broker: BrokerProcess;
  let healthy: RawConnection;
  let client: KafkaClient;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'socket.request.max.bytes': String(MAX_REQUEST) } });
    healthy = await RawConnection.connect(broker.port);
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bad-input-admin' });
    const created = await client.createTopics([
      { name: 'target', numPartitions: 2 },
      { name: 'bulk', numPartitions: 1 },
    ]);
    expect(created.map((c) => c.errorCode)).toEqual([0, 0]);
    await client.waitForTopics(['target', 'bulk']);
  });

  afterAll(async () => {
    healthy?.destroy();
    await client?.close();
    await broker?.stop();
  });

  /** The broker still answers a well-behaved client, on a connection opened before the bad input. */
  async function expectServed(): Promise<void> {
    expect(broker.running).toBe(true);
    const res = await healthy.request(MetadataApi, 12, metadataRequest(['target'], false), 5000);
    expect(res.topics[0]).toMatchObject({ name: 'target', errorCode: 0 });
  }

  async function expectClosedBy(bytes: Buffer | Buffer[], what: string): Promise<void> {
    const c = await RawConnection.connect(broker.port);
    c.write(bytes);
    await c.waitClosed(5000).catch((e: unknown) => {
      throw new Error(`${what}: ${String(e)}`);
    });
    expect(c.buffered).toBe(0);
    await expectServed();
  }

  it('waits for the rest of a truncated frame without answering, and lets the client go', async () => {
    const full = encodeRequestFrame(MetadataApi, 12, 7, 'x', metadataRequest(['target'], false));
    const bytes = Buffer.concat(full);
    const c = await RawConnection.connect(broker.port);
    c.write(bytes.subarray(0, bytes.length - 5));
    await expect(c.nextFrame(300)).rejects.toThrow(/no response/);
    await expectServed();
    // The rest arrives: the request is answered.
    c.write(bytes.subarray(bytes.length - 5));
    expect((await c.nextFrame(5000)).readInt32BE(0)).toBe(7);
    // A second truncated frame, then the client half-closes: the broker closes too.
    c.write(bytes.subarray(0, 9));
    c.socket.end();
    await c.waitClosed(5000);
    await expectServed();
  });

  it('closes the connection on a size prefix above socket.request.max.bytes without allocating it', async () => {
    const before = broker.rssKiB();
    for (const size of [MAX_REQUEST + 1, 0x7fffffff]) await expectClosedBy(sizePrefix(size), `size ${size}`);
    // Announcing 2 GiB costs nothing: the prefix is refused before any buffer is made for it.
    expect(broker.rssKiB() - before).toBeLessThan(64 * 1024);
    // The limit itself is allowed: a frame of exactly MAX_REQUEST bytes is read (and, being garbage, refused).
    const c = await RawConnection.connect(broker.port);
    c.write(sizePrefix(MAX_REQUEST));
    c.write(Buffer.alloc(MAX_REQUEST - 1, 0xee));
    await expect(c.nextFrame(300)).rejects.toThrow(/no response/);
    expect(c.isClosed).toBe(false);
    c.write(Buffer.alloc(1, 0xee));
    await c.waitClosed(5000);
    await expectServed();
  });

  it('closes the connection on a negative or empty frame', async () => {
    await expectClosedBy(sizePrefix(-1), 'size -1');
    await expectClosedBy(sizePrefix(-0x80000000), 'size MIN_INT');
    await expectClosedBy(sizePrefix(0), 'size 0');
    // A frame too short to hold a request header.
    await expectClosedBy(Buffer.concat([sizePrefix(3), Buffer.from([0, 3, 0])]), 'short header');
  });

  it('closes the connection on an unknown API key or an API it does not serve', async () => {
    await expectClosedBy(frame(999, 0, 1, Buffer.alloc(0), 1), 'api key 999');
    await expectClosedBy(frame(-1, 0, 1, Buffer.alloc(0), 1), 'api key -1');
    // LeaderAndIsr exists in the schemas but is an inter-broker API of ZooKeeper-era Kafka.
    await expectClosedBy(frame(4, 7, 1, Buffer.alloc(16), 2), 'LeaderAndIsr');
  });

  it('closes the connection on a version it does not serve', async () => {
    await expectClosedBy(frame(MetadataApi.apiKey, 99, 1, Buffer.alloc(0)), 'Metadata v99');
    // Produce v0-2 are advertised (for old librdkafka) but refused, as Kafka 4 refuses them.
    await expectClosedBy(frame(ProduceApi.apiKey, 2, 1, Buffer.alloc(0), 1), 'Produce v2');
    await expectClosedBy(frame(FetchApi.apiKey, 3, 1, Buffer.alloc(0), 1), 'Fetch v3');
  });

  it('answers ApiVersions of an unknown version in v0 with UNSUPPORTED_VERSION and its own range, and stays open', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      c.write(frame(ApiVersionsApi.apiKey, 99, 41, Buffer.from([0, 0, 0, 0x55, 0x66])));
      const res = await c.receive(ApiVersionsApi, 0, 41);
      expect(res.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
      expect(res.apiKeys).toEqual([expect.objectContaining({ apiKey: 18, minVersion: 0, maxVersion: 5 })]);
      // The client retries with a version from that range on the same connection.
      const ok = await c.request(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'retry', clientSoftwareVersion: '1.0' }));
      expect(ok.errorCode).toBe(0);
      expect(ok.apiKeys.find((k) => k.apiKey === 1)).toMatchObject({ minVersion: 4, maxVersion: 18 });
    } finally {
      c.destroy();
    }
  });

  it('answers a request with bytes after its body, as Kafka does (librdkafka 2.16 sends such Metadata v12)', async () => {
    const metadata = Buffer.concat(encodeRequestFrame(MetadataApi, 12, 5, 'rdkafka', metadataRequest(null, false)));
    const padded = Buffer.concat([metadata, Buffer.from([1, 0, 0])]);
    padded.writeInt32BE(padded.length - 4, 0);
    const c = await RawConnection.connect(broker.port);
    try {
      c.write(padded);
      const res = await c.receive(MetadataApi, 12, 5);
      expect(res.brokers).toHaveLength(1);
    } finally {
      c.destroy();
    }
  });

  it('closes the connection on request bodies that do not parse', async () => {
    // Metadata v12 whose topic array claims more entries than there are bytes.
    await expectClosedBy(frame(MetadataApi.apiKey, 12, 1, Buffer.from([0x7f, 0xff, 0xff, 0x01, 0x01])), 'Metadata array length');
    // Random bytes as a Produce body.
    const noise = Buffer.alloc(200);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 131 + 17) & 0xff;
    await expectClosedBy(frame(ProduceApi.apiKey, 9, 1, noise), 'Produce noise');
    // Garbage where a record set's length says 1 GiB.
    // transactionalId null, acks 1, timeout 30 s, one topic 'a', one partition whose records claim 1 GiB.
    const lying = Buffer.from([0xff, 0xff, 0, 1, 0, 0, 0x75, 0x30, 0, 0, 0, 1, 0, 1, 0x61, 0, 0, 0, 1, 0, 0, 0, 0, 0x40, 0, 0, 0]);
    await expectClosedBy(frame(ProduceApi.apiKey, 8, 1, Buffer.concat([lying, Buffer.alloc(10)]), 1), 'Produce records length');
  });

  it('answers corrupt or invalid record batches per partition and keeps serving', async () => {
    const good = await buildRecordBatch([{ value: 'good' }]);
    const crcMismatch = Buffer.from(good);
    crcMismatch[crcMismatch.length - 1] ^= 0xff;
    const truncated = good.subarray(0, good.length - 3);
    const lengthTooLong = Buffer.from(good);
    lengthTooLong.writeInt32BE(good.length, BatchField.BATCH_LENGTH);
    const noise = Buffer.alloc(80, 0x41);
    const baseOffset = Buffer.from(good);
    baseOffset.writeBigInt64BE(5n, BatchField.BASE_OFFSET);
    const countMismatch = fixCrc(Buffer.from(good));
    countMismatch.writeInt32BE(3, BatchField.RECORD_COUNT);
    fixCrc(countMismatch);
    const control = fixCrc(Buffer.from(good));
    control.writeInt16BE(0x20, BatchField.ATTRIBUTES);
    fixCrc(control);
    const twoBatches = Buffer.concat([good, good]);
    const magic1 = Buffer.from(good);
    magic1.writeInt8(1, BatchField.MAGIC);
    const badCodec = Buffer.from(good);
    badCodec.writeInt16BE(6, BatchField.ATTRIBUTES);
    fixCrc(badCodec);

    const cases: [string, Buffer | null, number][] = [
      ['CRC mismatch', crcMismatch, ErrorCode.CORRUPT_MESSAGE],
      ['truncated batch', truncated, ErrorCode.CORRUPT_MESSAGE],
      ['length past the end', lengthTooLong, ErrorCode.CORRUPT_MESSAGE],
      ['noise', noise, ErrorCode.CORRUPT_MESSAGE],
      ['non-zero base offset', baseOffset, ErrorCode.INVALID_RECORD],
      ['count mismatch', countMismatch, ErrorCode.INVALID_RECORD],
      ['control batch', control, ErrorCode.INVALID_RECORD],
      ['two batches', twoBatches, ErrorCode.INVALID_RECORD],
      ['empty record set', Buffer.alloc(0), ErrorCode.INVALID_RECORD],
      ['null record set', null, ErrorCode.INVALID_RECORD],
      // Kafka's ProduceRequest.validateRecords: InvalidRecordException for anything but magic 2.
      ['magic 1', magic1, ErrorCode.INVALID_RECORD],
      ['compression id 6', badCodec, ErrorCode.INVALID_RECORD],
    ];
    const [before] = await client.listOffsets([{ topic: 'target', partition: 0, timestamp: -1n }]);
    const c = await RawConnection.connect(broker.port);
    try {
      for (const [what, records, expected] of cases) {
        // One request carries the bad batch for partition 0 and a good one for partition 1.
        const res: ProduceResponse = await c.request(
          ProduceApi,
          9,
          produceRequest([
            { topic: 'target', partition: 0, records },
            { topic: 'target', partition: 1, records: buildRecordBatchSync([{ value: what }]) },
          ]),
        );
        const parts = res.responses[0]!.partitionResponses;
        const p0 = parts.find((p) => p.index === 0)!;
        const p1 = parts.find((p) => p.index === 1)!;
        expect([what, p0.errorCode]).toEqual([what, expected]);
        expect(p0.baseOffset).toBe(-1n);
        expect(p0.errorMessage).toBeTruthy();
        expect([what, p1.errorCode]).toEqual([what, 0]);
      }
    } finally {
      c.destroy();
    }
    const [after] = await client.listOffsets([{ topic: 'target', partition: 0, timestamp: -1n }]);
    expect(after!.offset).toBe(before!.offset);
    const [p1] = await client.listOffsets([{ topic: 'target', partition: 1, timestamp: -1n }]);
    expect(p1!.offset).toBeGreaterThanOrEqual(BigInt(cases.length));
    await expectServed();
  });

  it('answers pipelined requests in order even when an earlier one finishes last', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const [end] = await client.listOffsets([{ topic: 'target', partition: 1, timestamp: -1n }]);
      const frames: Buffer[] = [];
      const expected: number[] = [];
      // A long-polling fetch first: everything after it finishes sooner but must wait for it.
      frames.push(...encodeRequestFrame(FetchApi, 12, 1000, 'p', fetchRequest({ maxWaitMs: 400, topics: [{ topic: 'target', partitions: [{ partition: 1, offset: end!.offset }] }] })));
      expected.push(1000);
      for (let i = 0; i < 60; i++) {
        const id = 1001 + i;
        expected.push(id);
        switch (i % 4) {
          case 0:
            frames.push(...encodeRequestFrame(MetadataApi, 12, id, 'p', metadataRequest(['target'], false)));
            break;
          case 1:
            frames.push(...encodeRequestFrame(ApiVersionsApi, 3, id, 'p', ApiVersionsApi.request.create({ clientSoftwareName: 'p', clientSoftwareVersion: '1' })));
            break;
          case 2:
            frames.push(...encodeRequestFrame(ProduceApi, 9, id, 'p', produceRequest([{ topic: 'bulk', partition: 0, records: buildRecordBatchSync([{ value: `pipelined ${i}` }]) }], 1)));
            break;
          default:
            frames.push(
              ...encodeRequestFrame(ListOffsetsApi, 7, id, 'p', ListOffsetsApi.request.create({ replicaId: -1, topics: [{ name: 'target', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }] })),
            );
        }
      }
      // One write: the broker sees them all at once.
      c.write(Buffer.concat(frames));
      const got: number[] = [];
      for (let i = 0; i < expected.length; i++) got.push((await c.nextFrame(10_000)).readInt32BE(0));
      expect(got).toEqual(expected);
    } finally {
      c.destroy();
    }
  });

  it('sends no answer to acks=0 produce, but answers the request after it', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const [before] = await client.listOffsets([{ topic: 'bulk', partition: 0, timestamp: -1n }]);
      c.send(ProduceApi, 9, produceRequest([{ topic: 'bulk', partition: 0, records: buildRecordBatchSync([{ value: 'fire and forget' }]) }], 0), 501);
      c.send(ProduceApi, 9, produceRequest([{ topic: 'bulk', partition: 0, records: Buffer.from('garbage, acks=0') }], 0), 502);
      c.send(MetadataApi, 12, metadataRequest(['bulk'], false), 503);
      const next = await c.receive(MetadataApi, 12, 503);
      expect(next.topics[0]!.name).toBe('bulk');
      await expect(c.nextFrame(200)).rejects.toThrow(/no response/);
      // The acks=0 batch was appended all the same.
      await waitFor('the acks=0 record', async () => {
        const [after] = await client.listOffsets([{ topic: 'bulk', partition: 0, timestamp: -1n }]);
        return after!.offset === before!.offset + 1n;
      });
    } finally {
      c.destroy();
    }
  });

  it('stops reading a client that pipelines without reading responses, and its memory stays bounded', async () => {
    // 256 KiB in the partition: every fetch answer carries all of it.
    const value = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 4; i++) {
      const [r] = await client.produce([{ topic: 'bulk', partition: 0, records: await buildRecordBatch([{ value }]) }]);
      expect(r!.errorCode).toBe(0);
    }
    const baseline = broker.rssKiB();
    // Requests padded with a 30 KB rack id, so that the client's own write buffer shows whether the broker reads.
    const one = Buffer.concat(encodeRequestFrame(FetchApi, 12, 1, 'greedy', { ...fetchRequest({ topics: [{ topic: 'bulk', partitions: [{ partition: 0, offset: 0n, maxBytes: 512 * 1024 }] }] }), rackId: 'r'.repeat(30_000) }));
    const greedy = await RawConnection.connect(broker.port);
    greedy.socket.pause(); // never read
    const count = 2500; // ~75 MB of requests asking for ~1.4 GB of answers
    try {
      for (let i = 0; i < count; i++) greedy.socket.write(one);
      // The client's buffer drains as far as the broker reads; wait until it has not moved for a while.
      let stalled = -1;
      let since = Date.now();
      await waitFor(
        'the client writes to stall',
        () => {
          const now = greedy.socket.writableLength;
          if (now !== stalled) {
            stalled = now;
            since = Date.now();
            return false;
          }
          return Date.now() - since >= 750;
        },
        30_000,
        50,
      );
      // The broker stopped reading: most of what the client wrote is still in the client's own buffer
      // (loopback would have taken all 75 MB in well under a second otherwise).
      expect(stalled).toBeGreaterThan(30 * 1024 * 1024);
      await expect(healthy.request(MetadataApi, 12, metadataRequest(['bulk'], false), 5000)).resolves.toBeDefined();
      await expectServed();
      expect(greedy.socket.writableLength).toBe(stalled);
      const grown = broker.rssKiB() - baseline;
      // Responses queued for the client are bounded (64 MiB of unwritten bytes, 100 requests in flight);
      // without backpressure it would be over a gigabyte.
      expect(grown).toBeLessThan(400 * 1024);
      // A fetch from another client goes through while the greedy one is stalled.
      const [f] = await client.fetch([{ topic: 'bulk', partition: 0, offset: 0n }], { maxWaitMs: 0 });
      expect(f!.errorCode).toBe(0);
      expect(f!.records!.length).toBeGreaterThan(4 * 64 * 1024);
    } finally {
      greedy.destroy();
    }
    await expectServed();
  });
});
