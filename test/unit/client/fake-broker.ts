/**
 * A tiny in-test TCP server that speaks just enough Kafka for the client's unit tests: it decodes request
 * frames with the project's codec and answers through per-API handlers, in request order per connection
 * (as a Kafka broker does). Handlers can delay, stay silent, write raw bytes or drop the connection, which
 * is what the tests need to exercise timeouts, disconnects and protocol violations.
 */
import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import type { ApiDescriptor, VersionRange } from '../../../protocol/api.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { encodeResponseFrame, readRequestHeader } from '../../../protocol/headers.js';
import type { RequestHeader } from '../../../protocol/headers.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { MetadataResponse } from '../../../protocol/messages/003-metadata.gen.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import type { ApiVersionsResponse } from '../../../protocol/messages/018-api-versions.gen.js';
import { apis } from '../../../protocol/messages/index.gen.js';
import { Reader } from '../../../protocol/wire/reader.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { FrameSplitter } from '../../../protocol/wire/frames.js';

export interface ReceivedRequest {
  readonly header: RequestHeader;
  readonly api: ApiDescriptor;
  readonly version: number;
  readonly body: unknown;
  /** Index of the connection (in accept order) the request came on. */
  readonly connection: number;
}

/** What a handler returns: a response body to encode, or one of these. */
export type Reply =
  | { kind: 'none' } // no answer (acks=0 Produce, or a broker that hangs)
  | { kind: 'raw'; bytes: Buffer } // bytes written as they are
  | { kind: 'close' }; // drop the connection

export const NO_REPLY: Reply = { kind: 'none' };
export const CLOSE: Reply = { kind: 'close' };

export type Handler = (req: ReceivedRequest, socket: Socket) => unknown;

export interface FakeBrokerOptions {
  /** Handlers by API key. ApiVersions has a default (see `apiVersions`). */
  handlers?: Partial<Record<number, Handler>>;
  /** Ranges advertised by the default ApiVersions handler; default: every API at the codec's full range. */
  apiVersions?: ReadonlyMap<number, VersionRange>;
  /** Highest ApiVersions version the default handler accepts (KIP-511 tests). Default the codec's max. */
  maxApiVersionsVersion?: number;
}

export class FakeBroker {
  readonly received: ReceivedRequest[] = [];
  readonly sockets: Socket[] = [];
  /** Errors thrown by handlers (the connection was dropped for each). */
  readonly errors: Error[] = [];
  private readonly server: Server;
  private readonly options: FakeBrokerOptions;
  handlers: Partial<Record<number, Handler>>;

  private constructor(server: Server, options: FakeBrokerOptions) {
    this.server = server;
    this.options = options;
    this.handlers = { ...options.handlers };
    server.on('connection', (socket) => this.accept(socket));
  }

  static async start(options: FakeBrokerOptions = {}): Promise<FakeBroker> {
    const server = createServer();
    const broker = new FakeBroker(server, options);
    await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
    return broker;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Requests received for one API key. */
  requests(api: ApiDescriptor): ReceivedRequest[] {
    return this.received.filter((r) => r.api.apiKey === api.apiKey);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: Socket): void {
    const index = this.sockets.length;
    this.sockets.push(socket);
    const frames = new FrameSplitter({ maxFrameBytes: 64 * 1024 * 1024 });
    // Answers leave in request order even when handlers finish out of order.
    let chain: Promise<void> = Promise.resolve();
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      for (const frame of frames.push(chunk)) {
        const r = new Reader(frame);
        const { header, api } = readRequestHeader(r);
        if (!api) throw new Error(`fake broker: unknown API key ${header.requestApiKey}`);
        const version = header.requestApiVersion;
        const known = version >= api.validVersions.min && version <= api.validVersions.max;
        const body = known ? api.request.decode(r, version) : undefined;
        const req: ReceivedRequest = { header, api, version, body, connection: index };
        this.received.push(req);
        const pending = Promise.resolve().then(() => this.handle(req, socket));
        chain = chain.then(async () => {
          let reply: unknown;
          try {
            reply = await pending;
            if (!isReply(reply) && reply !== undefined) reply = { kind: 'raw', bytes: Buffer.concat(encodeResponseFrame(api, version, header.correlationId, reply)) };
          } catch (e) {
            // A handler bug must fail the test quickly, not leave the client waiting for its timeout.
            this.errors.push(e as Error);
            socket.destroy();
            return;
          }
          if (socket.destroyed) return;
          if (reply === undefined) return;
          if (isReply(reply)) {
            if (reply.kind === 'raw') socket.write(reply.bytes);
            else if (reply.kind === 'close') socket.destroy();
            return;
          }
        });
      }
    });
  }

  private handle(req: ReceivedRequest, socket: Socket): unknown {
    const h = this.handlers[req.api.apiKey];
    if (h) return h(req, socket);
    if (req.api.apiKey === ApiVersionsApi.apiKey) return this.defaultApiVersions(req);
    throw new Error(`fake broker: no handler for ${req.api.name}`);
  }

  private defaultApiVersions(req: ReceivedRequest): unknown {
    const ranges = this.options.apiVersions ?? new Map(apis.map((a) => [a.apiKey, a.validVersions] as const));
    const max = this.options.maxApiVersionsVersion ?? ApiVersionsApi.validVersions.max;
    const apiKeys = [...ranges].map(([apiKey, r]) => ({
      apiKey,
      minVersion: r.min,
      maxVersion: apiKey === ApiVersionsApi.apiKey ? Math.min(r.max, max) : r.max,
    }));
    if (req.version > max) {
      // KIP-511: UNSUPPORTED_VERSION in a v0 body, listing the broker's ApiVersions range.
      return { kind: 'raw', bytes: apiVersionsV0Frame(req.header.correlationId, ErrorCode.UNSUPPORTED_VERSION, apiKeys.filter((k) => k.apiKey === ApiVersionsApi.apiKey)) };
    }
    const response: ApiVersionsResponse = ApiVersionsApi.response.create({ errorCode: 0, apiKeys });
    return response;
  }
}

function isReply(x: unknown): x is Reply {
  return typeof x === 'object' && x !== null && 'kind' in x && ['none', 'raw', 'close'].includes((x as Reply).kind);
}

/** A Metadata answer naming `broker` as node 1, the controller and the leader of all `partitions` of `topic`. */
export function oneNodeMetadata(broker: FakeBroker, topic: string, topicId: string, partitions: number): MetadataResponse {
  return MetadataApi.response.create({
    brokers: [{ nodeId: 1, host: '127.0.0.1', port: broker.port, rack: null }],
    clusterId: 'c',
    controllerId: 1,
    topics: [
      {
        errorCode: 0,
        name: topic,
        topicId,
        isInternal: false,
        topicAuthorizedOperations: 0,
        partitions: Array.from({ length: partitions }, (_, partitionIndex) => ({
          errorCode: 0,
          partitionIndex,
          leaderId: 1,
          leaderEpoch: 0,
          replicaNodes: [],
          isrNodes: [],
          offlineReplicas: [],
        })),
      },
    ],
  });
}

/** An ApiVersions answer in the v0 layout, as a broker sends for a version it does not know. */
export function apiVersionsV0Frame(
  correlationId: number,
  errorCode: number,
  apiKeys: ReadonlyArray<{ apiKey: number; minVersion: number; maxVersion: number }>,
): Buffer {
  const frames = encodeResponseFrame(ApiVersionsApi, 0, correlationId, ApiVersionsApi.response.create({ errorCode, apiKeys: [...apiKeys] }));
  return Buffer.concat(frames);
}

/** A response frame for `api` at `version` with an arbitrary correlation id. */
export function responseFrame<Res>(api: ApiDescriptor<unknown, Res>, version: number, correlationId: number, body: Res): Buffer {
  return Buffer.concat(encodeResponseFrame(api, version, correlationId, body));
}

/** Resolves when `predicate` holds, polling until `timeoutMs` passes (then rejects). */
export async function until(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Encodes a body with the codec (for byte-level assertions). */
export function encodeBody<Req>(api: ApiDescriptor<Req, unknown>, version: number, body: Req): Buffer {
  const w = new Writer();
  api.request.encode(w, body, version);
  return w.toBuffer();
}
