import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ProduceApi } from '../../../protocol/messages/000-produce.gen.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { MetadataRequest, MetadataResponse } from '../../../protocol/messages/003-metadata.gen.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { Connection, encodeRequestBody } from '../../../src/client/connection.js';
import {
  ClientError,
  ConnectError,
  ConnectionClosedError,
  ProtocolViolationError,
  RequestTimeoutError,
} from '../../../src/client/errors.js';
import { CLOSE, FakeBroker, NO_REPLY, apiVersionsV0Frame, responseFrame, until } from './fake-broker.js';

const brokers: FakeBroker[] = [];
const conns: Connection[] = [];

afterEach(async () => {
  for (const c of conns.splice(0)) c.destroy();
  for (const b of brokers.splice(0)) await b.close();
});

async function broker(...args: Parameters<typeof FakeBroker.start>): Promise<FakeBroker> {
  const b = await FakeBroker.start(...args);
  brokers.push(b);
  return b;
}

async function connect(b: FakeBroker, extra: Partial<Parameters<typeof Connection.connect>[0]> = {}): Promise<Connection> {
  const c = await Connection.connect({ host: '127.0.0.1', port: b.port, ...extra });
  conns.push(c);
  return c;
}

/** A Metadata answer naming one broker whose node id echoes a number, to tell answers apart. */
function metadataAnswer(tag: number): MetadataResponse {
  return MetadataApi.response.create({ brokers: [{ nodeId: tag, host: 'h', port: 1, rack: null }], clusterId: 'c', controllerId: 1 });
}

describe('Connection: version negotiation', () => {
  it('uses the highest version both sides support for each API', async () => {
    const b = await broker({
      apiVersions: new Map([
        [ApiVersionsApi.apiKey, { min: 0, max: 4 }],
        [MetadataApi.apiKey, { min: 1, max: 5 }],
      ]),
      handlers: { [MetadataApi.apiKey]: () => metadataAnswer(1) },
    });
    const c = await connect(b);
    expect(b.requests(ApiVersionsApi)[0]!.version).toBe(ApiVersionsApi.validVersions.max);
    expect(c.versionFor(MetadataApi)).toBe(5);
    await c.request(MetadataApi, MetadataApi.request.create({ topics: [] }));
    expect(b.requests(MetadataApi)[0]!.version).toBe(5);
    expect(() => c.versionFor(ProduceApi)).toThrow(/does not serve Produce/);
  });

  it('retries ApiVersions at the version a broker names in its UNSUPPORTED_VERSION answer (KIP-511)', async () => {
    const b = await broker({ maxApiVersionsVersion: 2 });
    const c = await connect(b);
    expect(b.requests(ApiVersionsApi).map((r) => r.version)).toEqual([ApiVersionsApi.validVersions.max, 2]);
    expect(c.versions?.brokerRange(MetadataApi.apiKey)).toEqual(MetadataApi.validVersions);
  });

  it('retries ApiVersions at v0 when the UNSUPPORTED_VERSION answer lists no range', async () => {
    const b = await broker({
      handlers: {
        [ApiVersionsApi.apiKey]: (req) =>
          req.version > 0
            ? { kind: 'raw', bytes: apiVersionsV0Frame(req.header.correlationId, ErrorCode.UNSUPPORTED_VERSION, []) }
            : ApiVersionsApi.response.create({ apiKeys: [{ apiKey: MetadataApi.apiKey, minVersion: 0, maxVersion: 1 }] }),
      },
    });
    const c = await connect(b);
    expect(b.requests(ApiVersionsApi).map((r) => r.version)).toEqual([ApiVersionsApi.validVersions.max, 0]);
    expect(c.versionFor(MetadataApi)).toBe(1);
  });

  it('fails the connect with the Kafka error when ApiVersions fails otherwise', async () => {
    const b = await broker({
      handlers: { [ApiVersionsApi.apiKey]: () => ApiVersionsApi.response.create({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED }) },
    });
    await expect(Connection.connect({ host: '127.0.0.1', port: b.port })).rejects.toMatchObject({
      code: 'LL_ERR_KAFKA',
      errorName: 'CLUSTER_AUTHORIZATION_FAILED',
    });
  });
});

describe('Connection: requests', () => {
  it('pipelines many requests on one socket and matches each answer to its request', async () => {
    const n = 200;
    let released!: () => void;
    const allArrived = new Promise<void>((r) => (released = r));
    const b = await broker({
      handlers: {
        [MetadataApi.apiKey]: async (req) => {
          // Answer only once every request has arrived: proves they were all in flight together.
          if (b.requests(MetadataApi).length === n) released();
          await allArrived;
          return metadataAnswer(((req.body as MetadataRequest).topics ?? []).length);
        },
      },
    });
    const c = await connect(b);
    const answers = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        c.request(MetadataApi, MetadataApi.request.create({ topics: Array.from({ length: i % 7 }, (_, k) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: `t${k}` })) })),
      ),
    );
    expect(answers.map((a) => a.brokers[0]!.nodeId)).toEqual(Array.from({ length: n }, (_, i) => i % 7));
    expect(b.sockets).toHaveLength(1);
    expect(c.inFlightCount).toBe(0);
  });

  it('decodes answers that arrive one byte at a time', async () => {
    const b = await broker({
      handlers: {
        [MetadataApi.apiKey]: async (req, socket) => {
          const bytes = responseFrame(MetadataApi, req.version, req.header.correlationId, metadataAnswer(42));
          for (const byte of bytes) {
            socket.write(Buffer.from([byte]));
            await new Promise((r) => setImmediate(r));
          }
          return NO_REPLY;
        },
      },
    });
    const c = await connect(b);
    const answer = await c.request(MetadataApi, MetadataApi.request.create({ topics: [] }));
    expect(answer.brokers[0]!.nodeId).toBe(42);
  });

  it('sends a pre-encoded body with a fresh header and correlation id each time', async () => {
    const b = await broker({ handlers: { [MetadataApi.apiKey]: (req) => metadataAnswer(req.header.correlationId) } });
    const c = await connect(b);
    const version = c.versionFor(MetadataApi);
    const body = encodeRequestBody(MetadataApi, version, MetadataApi.request.create({ topics: null }));
    const [a1, a2] = await Promise.all([c.requestEncoded(MetadataApi, version, body), c.requestEncoded(MetadataApi, version, body)]);
    const ids = b.requests(MetadataApi).map((r) => r.header.correlationId);
    expect(new Set(ids).size).toBe(2);
    expect([a1.brokers[0]!.nodeId, a2.brokers[0]!.nodeId]).toEqual(ids);
    expect(b.requests(MetadataApi).every((r) => (r.body as MetadataRequest).topics === null)).toBe(true);
    expect(b.requests(MetadataApi)[0]!.header.clientId).toBe('ledgerline-client');
  });

  it('resolves a request that expects no answer once written, and keeps later answers in step', async () => {
    const b = await broker({
      handlers: { [ProduceApi.apiKey]: () => NO_REPLY, [MetadataApi.apiKey]: () => metadataAnswer(7) },
    });
    const c = await connect(b);
    await c.send(ProduceApi, ProduceApi.request.create({ acks: 0, timeoutMs: 1000, topicData: [] }));
    const answer = await c.request(MetadataApi, MetadataApi.request.create({ topics: [] }));
    expect(answer.brokers[0]!.nodeId).toBe(7);
    expect(b.requests(ProduceApi)).toHaveLength(1);
    expect(c.inFlightCount).toBe(0);
  });
});

describe('Connection: failures', () => {
  it('rejects with LL_ERR_CLIENT_CONNECT when nothing listens', async () => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen({ host: '127.0.0.1', port: 0 }, r));
    const port = (srv.address() as AddressInfo).port;
    await new Promise<void>((r) => srv.close(() => r()));
    const err = await Connection.connect({ host: '127.0.0.1', port }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe('LL_ERR_CLIENT_CONNECT');
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it('times a request out, then closes the connection and fails the requests behind it', async () => {
    const b = await broker({ handlers: { [MetadataApi.apiKey]: () => NO_REPLY } });
    const c = await connect(b, { requestTimeoutMs: 5000 });
    const first = c.request(MetadataApi, MetadataApi.request.create({ topics: [] }), { timeoutMs: 50 }).catch((e: unknown) => e);
    const second = c.request(MetadataApi, MetadataApi.request.create({ topics: [] })).catch((e: unknown) => e);
    const e1 = await first;
    expect(e1).toBeInstanceOf(RequestTimeoutError);
    expect((e1 as ClientError).code).toBe('LL_ERR_CLIENT_REQUEST_TIMEOUT');
    expect((e1 as ClientError).context).toMatchObject({ apiName: 'Metadata', apiKey: 3 });
    const e2 = await second;
    expect(e2).toBeInstanceOf(ConnectionClosedError);
    expect((e2 as Error).cause).toBe(e1);
    expect(c.isOpen).toBe(false);
    expect(await c.closed).toBe(e1);
  });

  it('fails every request in flight when the broker drops the connection, and refuses new ones', async () => {
    let seen = 0;
    const b = await broker({
      handlers: {
        [MetadataApi.apiKey]: () => {
          seen++;
          return seen === 3 ? CLOSE : NO_REPLY;
        },
      },
    });
    const c = await connect(b);
    const pending = [1, 2, 3].map(() => c.request(MetadataApi, MetadataApi.request.create({ topics: [] })).catch((e: unknown) => e));
    const errors = await Promise.all(pending);
    for (const e of errors) {
      expect(e).toBeInstanceOf(ConnectionClosedError);
      expect((e as ClientError).code).toBe('LL_ERR_CLIENT_DISCONNECTED');
    }
    await expect(c.request(MetadataApi, MetadataApi.request.create({ topics: [] }))).rejects.toMatchObject({ code: 'LL_ERR_CLIENT_DISCONNECTED' });
  });

  it('closes the connection when an answer does not belong to the oldest request in flight', async () => {
    const b = await broker({
      handlers: { [MetadataApi.apiKey]: (req) => ({ kind: 'raw', bytes: responseFrame(MetadataApi, req.version, req.header.correlationId + 1000, metadataAnswer(1)) }) },
    });
    const c = await connect(b);
    const err = await c.request(MetadataApi, MetadataApi.request.create({ topics: [] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect((err as Error).cause).toBeInstanceOf(ProtocolViolationError);
    expect(((err as Error).cause as Error).message).toMatch(/oldest request in flight/);
  });

  it('rejects only the request whose answer does not decode', async () => {
    let n = 0;
    const b = await broker({
      handlers: {
        [MetadataApi.apiKey]: (req) => {
          n++;
          if (n > 1) return metadataAnswer(5);
          // A well-framed answer whose body is cut short.
          const good = responseFrame(MetadataApi, req.version, req.header.correlationId, metadataAnswer(1));
          const bad = good.subarray(0, 12);
          bad.writeInt32BE(bad.length - 4, 0);
          return { kind: 'raw', bytes: Buffer.from(bad) };
        },
      },
    });
    const c = await connect(b);
    const [first, second] = await Promise.all([
      c.request(MetadataApi, MetadataApi.request.create({ topics: [] })).catch((e: unknown) => e),
      c.request(MetadataApi, MetadataApi.request.create({ topics: [] })),
    ]);
    expect(first).toBeInstanceOf(ProtocolViolationError);
    expect((first as ClientError).code).toBe('LL_ERR_CLIENT_PROTOCOL');
    expect(second.brokers[0]!.nodeId).toBe(5);
    expect(c.isOpen).toBe(true);
  });

  it('closes the connection on a frame larger than the limit', async () => {
    const b = await broker({
      apiVersions: new Map([[MetadataApi.apiKey, MetadataApi.validVersions]]),
      handlers: {
        [MetadataApi.apiKey]: () =>
          MetadataApi.response.create({ brokers: [{ nodeId: 1, host: 'x'.repeat(200), port: 1, rack: null }] }),
      },
    });
    const c = await connect(b, { maxFrameBytes: 100 });
    const err = await c.request(MetadataApi, MetadataApi.request.create({ topics: [] })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect((err as Error).cause).toBeInstanceOf(ProtocolViolationError);
    expect(((err as Error).cause as Error).message).toMatch(/exceeds maxFrameBytes 100/);
    expect(c.isOpen).toBe(false);
  });

  it('fails requests in flight with a closed-by-owner cause on close()', async () => {
    const b = await broker({ handlers: { [MetadataApi.apiKey]: () => NO_REPLY } });
    const c = await connect(b);
    const pending = c.request(MetadataApi, MetadataApi.request.create({ topics: [] })).catch((e: unknown) => e);
    await until(() => b.requests(MetadataApi).length === 1);
    await c.close();
    const err = await pending;
    expect(err).toBeInstanceOf(ConnectionClosedError);
    expect(((err as Error).cause as ClientError).code).toBe('LL_ERR_CLIENT_CLOSED');
    expect(await c.closed).toBeNull();
  });
});
