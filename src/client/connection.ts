/**
 * One TCP (or TLS) connection to one broker.
 *
 *   request(api, body) ──► encode body ──► [size|header] + body chunks ──► socket (corked per tick: one writev)
 *                              │
 *   in flight (insertion order = send order):  cid 7 ─ cid 8 ─ cid 9 ─ ...
 *                              │
 *   socket ──► FrameSplitter ──► frame ──► correlation id must be the oldest in flight ──► decode ──► resolve
 *
 * - Many requests may be in flight at once (pipelining); a broker answers them in the order it received
 *   them (Kafka's per-connection ordering guarantee), so the connection checks every answer against the
 *   oldest request in flight, as Kafka's `NetworkClient` does, and treats anything else as a protocol
 *   violation that closes the connection.
 * - Each request has a deadline. When it passes, the request fails with RequestTimeoutError and the
 *   connection is closed, failing the requests behind it: answers come in order, so they could not arrive
 *   either (Kafka's NetworkClient disconnects on `request.timeout.ms` the same way).
 * - When the connection closes for any reason, every request in flight fails with ConnectionClosedError
 *   carrying the reason as `cause`. A closed connection stays closed; the cluster view opens a new one.
 * - Requests that expect no answer (Produce with acks=0) resolve once their bytes are handed to the kernel.
 *
 * `Connection.connect` negotiates versions with ApiVersions before resolving (see versions.ts), unless
 * `negotiateVersions` is false (for tests that speak to a server with no ApiVersions); with `sasl` it then
 * signs in (SaslHandshake v1 + SaslAuthenticate, sasl-scram-client.ts) before any other request, as Kafka's
 * SaslClientAuthenticator does on a SASL_PLAINTEXT or SASL_SSL listener.
 *
 * With `tls` the certificate is checked against the host: a name against its DNS SANs, an IP address against
 * its IP SANs (`127.0.0.1` needs `IP:127.0.0.1`). A name is also sent as SNI; an IP address is not, since
 * RFC 6066 §3 allows only host names there (Node warns, DEP0123), as Java's client leaves SNI out for one.
 */
import { connect as netConnect, isIP } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect, TLSSocket } from 'node:tls';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { ApiDescriptor } from '../../protocol/api.js';
import { requestHeaderVersion, responseHeaderVersion } from '../../protocol/api.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../protocol/messages/018-api-versions.gen.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { encodeRequestHeader } from '../../protocol/messages/request-header.gen.js';
import { decodeResponseHeader } from '../../protocol/messages/response-header.gen.js';
import { FrameSplitter, FrameTooLargeError } from '../../protocol/wire/frames.js';
import { Reader } from '../../protocol/wire/reader.js';
import { Writer } from '../../protocol/wire/writer.js';
import type { ClientErrorContext } from './errors.js';
import type { SaslClientOptions } from './sasl-scram-client.js';
import { authenticateSasl } from './sasl-scram-client.js';
import {
  ClientClosedError,
  ConnectError,
  ConnectionClosedError,
  KafkaResponseError,
  ProtocolViolationError,
  RequestTimeoutError,
} from './errors.js';
import { ApiVersionTable, apiVersionsRetryVersion, decodeApiVersionsBody } from './versions.js';

export interface ConnectionOptions {
  host: string;
  port: number;
  /** Sent in every request header (Kafka's `client.id`). Default `ledgerline-client`. */
  clientId?: string | null;
  /** Node id of the broker, when known; only used in error messages. */
  nodeId?: number;
  /** Default 10 000 (Kafka's `socket.connection.setup.timeout.max.ms` is 30 s; a local cluster needs less). */
  connectTimeoutMs?: number;
  /** Default per-request timeout. Default 30 000 (Kafka's `request.timeout.ms`). */
  requestTimeoutMs?: number;
  /** Largest response frame accepted. Default 256 MiB. */
  maxFrameBytes?: number;
  /** Connect with TLS using these options (`true` for defaults); `ca` to trust a private CA. */
  tls?: TlsConnectionOptions | boolean;
  /** Sign in with SASL SCRAM before the first request (a SASL_PLAINTEXT, or with `tls` a SASL_SSL, listener). */
  sasl?: SaslClientOptions;
  /** Send ApiVersions on connect and pick versions from the answer. Default true. */
  negotiateVersions?: boolean;
  /** ApiVersions v3+ client software name and version (KIP-511). */
  clientSoftwareName?: string;
  clientSoftwareVersion?: string;
}

export interface RequestOptions {
  /** API version to send; default the highest version both sides support (or the codec's highest without negotiation). */
  version?: number;
  /** Overrides the connection's request timeout for this request. */
  timeoutMs?: number;
}

interface InFlight {
  readonly correlationId: number;
  readonly api: ApiDescriptor;
  readonly version: number;
  readonly decode: (body: Buffer) => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
  readonly timeoutMs: number;
}

const DEFAULT_CLIENT_ID = 'ledgerline-client';
const MAX_CORRELATION_ID = 0x7fffffff;

/** Cached `size | header` prefixes per (api key, version), patched with size and correlation id per request. */
interface HeaderTemplate {
  readonly bytes: Buffer;
}

export class Connection {
  readonly host: string;
  readonly port: number;
  readonly nodeId: number | undefined;
  readonly clientId: string | null;
  /** Resolves once the connection has closed, with the reason (null after a clean `close()`). */
  readonly closed: Promise<Error | null>;

  private readonly socket: Socket;
  private readonly frames: FrameSplitter;
  private readonly requestTimeoutMs: number;
  private readonly inFlight = new Map<number, InFlight>();
  private readonly headers = new Map<number, HeaderTemplate>();
  private nextCorrelationId = 0;
  private corked = false;
  private closeReason: Error | null | undefined = undefined;
  private resolveClosed!: (reason: Error | null) => void;
  private table: ApiVersionTable | undefined;
  private saslLifetimeMs: bigint | undefined;

  private constructor(socket: Socket, options: ConnectionOptions) {
    this.socket = socket;
    this.host = options.host;
    this.port = options.port;
    this.nodeId = options.nodeId;
    this.clientId = options.clientId === undefined ? DEFAULT_CLIENT_ID : options.clientId;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.frames = new FrameSplitter({ maxFrameBytes: options.maxFrameBytes ?? 256 * 1024 * 1024, limitName: 'maxFrameBytes' });
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(new ConnectionClosedError(`connection error: ${err.message}`, this.context(), err)));
    socket.on('close', () => this.fail(new ConnectionClosedError('connection closed by the broker', this.context())));
  }

  /**
   * Opens a connection and, unless `negotiateVersions` is false, negotiates API versions. Rejects with
   * ConnectError when the socket cannot be opened in time, and with the handshake's error otherwise.
   */
  static async connect(options: ConnectionOptions): Promise<Connection> {
    const socket = await openSocket(options);
    const conn = new Connection(socket, options);
    try {
      if (options.negotiateVersions !== false) await conn.negotiate(options);
      if (options.sasl) conn.saslLifetimeMs = (await authenticateSasl(conn, options.sasl, conn.context())).sessionLifetimeMs;
    } catch (e) {
      conn.destroy(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
    return conn;
  }

  /** With `tls`: the protocol version and cipher suite negotiated (e.g. `TLSv1.3`, `TLS_AES_256_GCM_SHA384`). */
  get tlsSession(): { protocol: string | null; cipher: string } | undefined {
    if (!(this.socket instanceof TLSSocket)) return undefined;
    return { protocol: this.socket.getProtocol(), cipher: this.socket.getCipher().standardName };
  }

  /**
   * With `sasl`: the session lifetime the broker gave in SaslAuthenticate (KIP-368; 0 = none). This client does
   * not re-authenticate, so a broker that set one closes the connection once it has passed.
   */
  get saslSessionLifetimeMs(): bigint | undefined {
    return this.saslLifetimeMs;
  }

  /** `host:port`. */
  get address(): string {
    return `${this.host}:${this.port}`;
  }

  get isOpen(): boolean {
    return this.closeReason === undefined;
  }

  /** Requests sent whose answer has not arrived. */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  /** True while the socket's write buffer is above its high-water mark; wait for `drained()` before sending more. */
  get needsDrain(): boolean {
    return this.socket.writableNeedDrain;
  }

  /** Resolves when the socket's write buffer has drained (at once when it is not full). */
  drained(): Promise<void> {
    if (!this.socket.writableNeedDrain || !this.isOpen) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.on('drain', done);
      this.socket.on('close', done);
    });
  }

  /** The broker's advertised API versions, once negotiated. */
  get versions(): ApiVersionTable | undefined {
    return this.table;
  }

  /**
   * The version this connection uses for `api`: the highest common version within `limit`, or the codec's
   * highest (within `limit`) when versions were not negotiated.
   */
  versionFor(api: ApiDescriptor, limit?: { min?: number; max?: number }): number {
    if (this.table) return this.table.pick(api, limit);
    return Math.min(api.validVersions.max, limit?.max ?? api.validVersions.max);
  }

  /** Sends a request and resolves with the decoded response. */
  request<Req, Res>(api: ApiDescriptor<Req, Res>, body: Req, options: RequestOptions = {}): Promise<Res> {
    const version = options.version ?? this.versionFor(api);
    const w = new Writer(256);
    api.request.encode(w, body, version);
    return this.requestEncoded(api, version, w.chunks(), options.timeoutMs);
  }

  /** Sends a request that the broker does not answer (Produce with acks=0); resolves once written. */
  send<Req>(api: ApiDescriptor<Req, unknown>, body: Req, options: RequestOptions = {}): Promise<void> {
    const version = options.version ?? this.versionFor(api);
    const w = new Writer(256);
    api.request.encode(w, body, version);
    return this.sendEncoded(api, version, w.chunks());
  }

  /**
   * Sends a request whose body is already encoded at `version` (see `encodeRequestBody`) and resolves with
   * the decoded response. The connection adds the size prefix and header. The body chunks are written by
   * reference: do not change them until the returned promise settles.
   */
  requestEncoded<Res>(api: ApiDescriptor<unknown, Res>, version: number, body: readonly Buffer[], timeoutMs?: number): Promise<Res> {
    return this.enqueue(api, version, body, timeoutMs ?? this.requestTimeoutMs, (frame) => decodeBody(api, version, frame)) as Promise<Res>;
  }

  /** `requestEncoded` for a request the broker does not answer; resolves once the bytes reach the kernel. */
  sendEncoded(api: ApiDescriptor, version: number, body: readonly Buffer[]): Promise<void> {
    if (!this.isOpen) return Promise.reject(this.closedError(api, version));
    const { header } = this.header(api, version, body);
    return new Promise<void>((resolve, reject) => {
      this.write(header, body, (err) => (err ? reject(new ConnectionClosedError(`write failed: ${err.message}`, this.context(api, version), err)) : resolve()));
    });
  }

  /**
   * Closes the connection. Requests still in flight fail with ConnectionClosedError whose cause is a
   * ClientClosedError. Resolves once the socket has closed.
   */
  async close(): Promise<void> {
    if (this.isOpen) {
      this.fail(null);
      this.socket.end();
      // A peer that never closes its side must not keep us waiting.
      const t = setTimeout(() => this.socket.destroy(), 1000);
      await new Promise<void>((resolve) => {
        if (this.socket.closed) resolve();
        else this.socket.once('close', () => resolve());
      });
      clearTimeout(t);
    }
    await this.closed;
  }

  /** Closes the connection at once, failing requests in flight with `reason`. */
  destroy(reason?: Error): void {
    this.fail(reason ?? null);
    this.socket.destroy();
  }

  // ---------------------------------------------------------------------------------------------------

  private async negotiate(options: ConnectionOptions): Promise<void> {
    const body: ApiVersionsRequest = ApiVersionsApi.request.create({
      clientSoftwareName: options.clientSoftwareName ?? 'ledgerline-client',
      clientSoftwareVersion: options.clientSoftwareVersion ?? '0.1.0',
    });
    let version = ApiVersionsApi.validVersions.max;
    for (;;) {
      const response = await this.apiVersions(body, version);
      if (response.errorCode === ErrorCode.NONE) {
        this.table = ApiVersionTable.fromResponse(response);
        return;
      }
      const retry = apiVersionsRetryVersion(response, version);
      if (retry === undefined) throw new KafkaResponseError(response.errorCode, this.context(ApiVersionsApi, version));
      version = retry;
    }
  }

  private apiVersions(body: ApiVersionsRequest, version: number): Promise<ApiVersionsResponse> {
    const w = new Writer(64);
    ApiVersionsApi.request.encode(w, body, version);
    // The ApiVersions response header is always v0 (a bare correlation id), whatever the version.
    return this.enqueue(ApiVersionsApi, version, w.chunks(), this.requestTimeoutMs, (frame) =>
      decodeApiVersionsBody(frame, 4, version),
    ) as Promise<ApiVersionsResponse>;
  }

  private enqueue(
    api: ApiDescriptor,
    version: number,
    body: readonly Buffer[],
    timeoutMs: number,
    decode: (frame: Buffer) => unknown,
  ): Promise<unknown> {
    if (!this.isOpen) return Promise.reject(this.closedError(api, version));
    const { header, correlationId } = this.header(api, version, body);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.onTimeout(correlationId), timeoutMs);
      this.inFlight.set(correlationId, { correlationId, api, version, decode, resolve, reject, timer, timeoutMs });
      this.write(header, body);
    });
  }

  /** A fresh `size | request header` buffer for one request, from a per-(api, version) template. */
  private header(api: ApiDescriptor, version: number, body: readonly Buffer[]): { header: Buffer; correlationId: number } {
    const key = api.apiKey * 0x10000 + version;
    let template = this.headers.get(key);
    if (template === undefined) {
      const w = new Writer(64);
      w.int32(0);
      encodeRequestHeader(w, { requestApiKey: api.apiKey, requestApiVersion: version, correlationId: 0, clientId: this.clientId }, requestHeaderVersion(api, version));
      template = { bytes: w.toBuffer() };
      this.headers.set(key, template);
    }
    let bodyLength = 0;
    for (const b of body) bodyLength += b.length;
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = correlationId === MAX_CORRELATION_ID ? 0 : correlationId + 1;
    const header = Buffer.allocUnsafe(template.bytes.length);
    template.bytes.copy(header);
    header.writeInt32BE(template.bytes.length - 4 + bodyLength, 0);
    // Every request header version starts with api key (int16), api version (int16), correlation id (int32).
    header.writeInt32BE(correlationId, 8);
    return { header, correlationId };
  }

  private write(header: Buffer, body: readonly Buffer[], cb?: (err?: Error | null) => void): void {
    // Requests issued in the same tick leave in one writev.
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    if (body.length === 0) {
      this.socket.write(header, cb);
      return;
    }
    this.socket.write(header);
    for (let i = 0; i < body.length; i++) {
      if (i === body.length - 1) this.socket.write(body[i]!, cb);
      else this.socket.write(body[i]!);
    }
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.frames.push(chunk);
    } catch (e) {
      if (e instanceof FrameTooLargeError) {
        this.destroy(new ProtocolViolationError(e.message, this.context(), e));
        return;
      }
      throw e;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private onFrame(frame: Buffer): void {
    if (!this.isOpen) return;
    if (frame.length < 4) {
      this.destroy(new ProtocolViolationError(`response frame of ${frame.length} bytes has no correlation id`, this.context()));
      return;
    }
    const correlationId = frame.readInt32BE(0);
    const oldest = this.inFlight.values().next();
    if (oldest.done || oldest.value.correlationId !== correlationId) {
      this.destroy(
        new ProtocolViolationError(
          oldest.done
            ? `response with correlation id ${correlationId} while no request is in flight`
            : `response with correlation id ${correlationId} while the oldest request in flight has ${oldest.value.correlationId}`,
          this.context(),
        ),
      );
      return;
    }
    const req = oldest.value;
    this.inFlight.delete(correlationId);
    clearTimeout(req.timer);
    let response: unknown;
    try {
      response = req.decode(frame);
    } catch (e) {
      // The frame boundary is intact, so the stream can go on; this request gets the decode failure.
      req.reject(new ProtocolViolationError(`undecodable ${req.api.name} v${req.version} response: ${(e as Error).message}`, this.context(req.api, req.version, correlationId), e));
      return;
    }
    req.resolve(response);
  }

  private onTimeout(correlationId: number): void {
    const req = this.inFlight.get(correlationId);
    if (!req) return;
    this.inFlight.delete(correlationId);
    const err = new RequestTimeoutError(req.timeoutMs, this.context(req.api, req.version, correlationId));
    req.reject(err);
    this.destroy(err);
  }

  /** Marks the connection closed (once) and fails everything in flight. `reason` null = closed by its owner. */
  private fail(reason: Error | null): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    const pending = [...this.inFlight.values()];
    this.inFlight.clear();
    for (const req of pending) {
      clearTimeout(req.timer);
      req.reject(this.closedError(req.api, req.version, req.correlationId));
    }
    this.resolveClosed(reason);
  }

  private closedError(api: ApiDescriptor, version: number, correlationId?: number): Error {
    const reason = this.closeReason ?? new ClientClosedError('connection', this.context());
    return new ConnectionClosedError(`connection closed: ${reason.message}`, this.context(api, version, correlationId), reason);
  }

  private context(api?: ApiDescriptor, version?: number, correlationId?: number): ClientErrorContext {
    return {
      broker: this.address,
      nodeId: this.nodeId,
      clientId: this.clientId,
      apiKey: api?.apiKey,
      apiName: api?.name,
      apiVersion: version,
      correlationId,
    };
  }
}

/** Encodes a request body at `version` into chunks for `Connection.requestEncoded`; large byte fields are referenced, not copied. */
export function encodeRequestBody<Req>(api: ApiDescriptor<Req, unknown>, version: number, body: Req): Buffer[] {
  const w = new Writer(256);
  api.request.encode(w, body, version);
  return w.chunks();
}

function decodeBody<Res>(api: ApiDescriptor<unknown, Res>, version: number, frame: Buffer): Res {
  const r = new Reader(frame);
  decodeResponseHeader(r, responseHeaderVersion(api, version));
  const response = api.response.decode(r, version);
  r.complete();
  return response;
}

function openSocket(options: ConnectionOptions): Promise<Socket> {
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  const context: ClientErrorContext = { broker: `${options.host}:${options.port}`, nodeId: options.nodeId };
  return new Promise((resolve, reject) => {
    const useTls = options.tls !== undefined && options.tls !== false;
    // SNI for a host name only (RFC 6066 §3); the certificate is checked against `host` either way.
    const sni = isIP(options.host) === 0 ? { servername: options.host } : {};
    const socket: Socket = useTls
      ? tlsConnect({ host: options.host, port: options.port, ...sni, ...(options.tls === true ? {} : (options.tls as TlsConnectionOptions)) })
      : netConnect({ host: options.host, port: options.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new ConnectError(`connect timed out after ${timeoutMs} ms`, context));
    }, timeoutMs);
    const onError = (err: Error): void => {
      clearTimeout(timer);
      socket.destroy();
      reject(new ConnectError(`cannot connect: ${err.message}`, context, err));
    };
    socket.once('error', onError);
    socket.once(useTls ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}
