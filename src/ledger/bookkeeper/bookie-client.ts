/**
 * One TCP connection per bookie speaking BookKeeper's v3 protocol (PerChannelBookieClient with
 * useV2WireProtocol=false): each frame is a 4-byte big-endian length and a serialized `Request`/`Response`
 * (BookkeeperProtocol.proto). Requests carry a txnId; responses come back matched by it, in any order.
 *
 * A bookie with authentication disabled (its default, AuthenticationDisabledAuthProviderFactory) accepts
 * requests at once, so no AUTH exchange is sent. Every request has a timeout (BookKeeper's
 * addEntryTimeout / readEntryTimeout); a lost connection fails everything in flight on it, and the next
 * request connects again. Results are status codes, not exceptions, as BookKeeper's callbacks take rc codes:
 * the bookie's StatusCode, or one of the negative codes below for what happened on this side.
 */
import net from 'node:net';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AddRequest_Flag,
  OperationType,
  ProtocolVersion,
  ReadRequest_Flag,
  RequestSchema,
  ResponseSchema,
  StatusCode,
  type Request,
  type Response,
} from './proto/BookkeeperProtocol_pb.js';

export { StatusCode };

/** The connection could not be made or broke while the request was in flight. */
export const RC_CONNECTION = -1;
/** No answer within the request timeout. */
export const RC_TIMEOUT = -2;
/** The answer did not parse or did not fit the request. */
export const RC_BAD_RESPONSE = -3;
/** The client was closed. */
export const RC_CLOSED = -4;

/** BookieProtocol.LAST_ADD_CONFIRMED: the entry id of a read that asks for the bookie's last entry. */
export const LAST_ADD_CONFIRMED = -1n;

export interface BookieClientOptions {
  readonly connectTimeoutMs?: number;
  /** Default timeout of a request (BookKeeper's addEntryTimeoutSec / readEntryTimeoutSec). */
  readonly requestTimeoutMs?: number;
  /** Largest frame accepted from a bookie (BookKeeper's nettyMaxFrameSizeBytes, 5 MiB by default). */
  readonly maxFrameBytes?: number;
  /** Called once per connection failure, for a log line. */
  readonly onConnectionError?: (address: string, err: Error) => void;
}

export interface ReadResult {
  readonly rc: number;
  /** The stored entry (digest header, digest, payload) when rc is EOK. */
  readonly body?: Buffer;
}

interface Pending {
  resolve(res: Response | number): void;
  timer: NodeJS.Timeout;
}

export class BookieClient {
  private socket: net.Socket | null = null;
  private connecting: Promise<net.Socket> | null = null;
  private readonly pending = new Map<bigint, Pending>();
  private nextTxn = 1n;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closed = false;
  private readonly requestTimeoutMs: number;
  private readonly maxFrameBytes: number;

  constructor(
    readonly address: string,
    private readonly options: BookieClientOptions = {},
  ) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.maxFrameBytes = options.maxFrameBytes ?? 64 * 1024 * 1024;
  }

  /** Adds one entry (`body` = digest header ++ payload). Resolves with the status (EOK, EFENCED, …). */
  async add(ledgerId: number, entryId: number, masterKey: Uint8Array, body: Uint8Array, opts: { recovery?: boolean; timeoutMs?: number } = {}): Promise<number> {
    const res = await this.request(
      OperationType.ADD_ENTRY,
      (txnId) =>
        create(RequestSchema, {
          header: { version: ProtocolVersion.VERSION_THREE, operation: OperationType.ADD_ENTRY, txnId },
          addRequest: { ledgerId: BigInt(ledgerId), entryId: BigInt(entryId), masterKey, body, ...(opts.recovery ? { flag: AddRequest_Flag.RECOVERY_ADD } : {}) },
        }),
      opts.timeoutMs,
    );
    if (typeof res === 'number') return res;
    if (!res.addResponse) return res.status !== StatusCode.EOK ? res.status : RC_BAD_RESPONSE;
    return res.addResponse.status;
  }

  /**
   * Reads one entry, or with entryId LAST_ADD_CONFIRMED (-1) the bookie's last entry of the ledger. `fence`
   * sends the FENCE_LEDGER flag with the master key (the recovery-open's reads): from then on the bookie
   * refuses normal adds to the ledger with EFENCED.
   */
  async read(ledgerId: number, entryId: number | bigint, opts: { fence?: boolean; masterKey?: Uint8Array; timeoutMs?: number } = {}): Promise<ReadResult> {
    const res = await this.request(
      OperationType.READ_ENTRY,
      (txnId) =>
        create(RequestSchema, {
          header: { version: ProtocolVersion.VERSION_THREE, operation: OperationType.READ_ENTRY, txnId },
          readRequest: {
            ledgerId: BigInt(ledgerId),
            entryId: BigInt(entryId),
            ...(opts.fence ? { flag: ReadRequest_Flag.FENCE_LEDGER, masterKey: opts.masterKey } : {}),
          },
        }),
      opts.timeoutMs,
    );
    if (typeof res === 'number') return { rc: res };
    const r = res.readResponse;
    if (!r) return { rc: res.status !== StatusCode.EOK ? res.status : RC_BAD_RESPONSE };
    if (r.status !== StatusCode.EOK) return { rc: r.status };
    return { rc: StatusCode.EOK, body: Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength) };
  }

  /** BookKeeper's explicit LAC (WriteLac): `body` is the digest-signed (ledgerId, lac). */
  async writeLac(ledgerId: number, lac: number, masterKey: Uint8Array, body: Uint8Array, timeoutMs?: number): Promise<number> {
    const res = await this.request(
      OperationType.WRITE_LAC,
      (txnId) =>
        create(RequestSchema, {
          header: { version: ProtocolVersion.VERSION_THREE, operation: OperationType.WRITE_LAC, txnId },
          writeLacRequest: { ledgerId: BigInt(ledgerId), lac: BigInt(lac), masterKey, body },
        }),
      timeoutMs,
    );
    if (typeof res === 'number') return res;
    return res.writeLacResponse?.status ?? (res.status !== StatusCode.EOK ? res.status : RC_BAD_RESPONSE);
  }

  /** ReadLac: the explicit LAC body a writer sent (if any) and the bookie's last entry of the ledger. */
  async readLac(ledgerId: number, timeoutMs?: number): Promise<{ rc: number; lacBody?: Buffer; lastEntryBody?: Buffer }> {
    const res = await this.request(
      OperationType.READ_LAC,
      (txnId) =>
        create(RequestSchema, {
          header: { version: ProtocolVersion.VERSION_THREE, operation: OperationType.READ_LAC, txnId },
          readLacRequest: { ledgerId: BigInt(ledgerId) },
        }),
      timeoutMs,
    );
    if (typeof res === 'number') return { rc: res };
    const r = res.readLacResponse;
    if (!r) return { rc: res.status !== StatusCode.EOK ? res.status : RC_BAD_RESPONSE };
    const buf = (b: Uint8Array): Buffer | undefined => (b.length ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : undefined);
    return { rc: r.status, lacBody: buf(r.lacBody), lastEntryBody: buf(r.lastEntryBody) };
  }

  /** Fails what is in flight with RC_CLOSED and closes the connection. */
  close(): void {
    this.closed = true;
    this.fail(RC_CLOSED);
    this.socket?.destroy();
    this.socket = null;
  }

  private async request(op: OperationType, build: (txnId: bigint) => Request, timeoutMs = this.requestTimeoutMs): Promise<Response | number> {
    if (this.closed) return RC_CLOSED;
    let socket: net.Socket;
    try {
      socket = await this.connect();
    } catch {
      return RC_CONNECTION;
    }
    const txnId = this.nextTxn++;
    const frame = toBinary(RequestSchema, build(txnId));
    const len = Buffer.allocUnsafe(4);
    len.writeUInt32BE(frame.length, 0);
    return new Promise<Response | number>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(txnId);
        resolve(RC_TIMEOUT);
      }, timeoutMs);
      this.pending.set(txnId, { resolve, timer });
      socket.cork();
      socket.write(len);
      socket.write(frame);
      process.nextTick(() => socket.uncork());
      void op;
    });
  }

  private connect(): Promise<net.Socket> {
    if (this.socket && !this.socket.destroyed) return Promise.resolve(this.socket);
    if (this.connecting) return this.connecting;
    const [host, portText] = splitAddress(this.address);
    this.connecting = new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host, port: Number(portText), noDelay: true });
      const timer = setTimeout(() => socket.destroy(new Error(`connect to bookie ${this.address} timed out`)), this.options.connectTimeoutMs ?? 10_000);
      socket.once('connect', () => {
        clearTimeout(timer);
        this.socket = socket;
        this.connecting = null;
        this.chunks = [];
        this.buffered = 0;
        resolve(socket);
      });
      socket.on('data', (chunk) => this.onData(socket, chunk));
      socket.on('error', (err) => {
        clearTimeout(timer);
        this.options.onConnectionError?.(this.address, err);
        if (this.connecting && this.socket !== socket) {
          this.connecting = null;
          reject(err);
        }
      });
      socket.on('close', () => {
        clearTimeout(timer);
        if (this.socket === socket) {
          this.socket = null;
          this.fail(RC_CONNECTION);
        } else if (this.connecting) {
          this.connecting = null;
          reject(new Error(`connection to bookie ${this.address} closed`));
        }
      });
    });
    return this.connecting;
  }

  /** Joins partial frames once the announced length has arrived. */
  private onData(socket: net.Socket, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= 4) {
      const head = this.chunks[0].length >= 4 ? this.chunks[0] : Buffer.concat(this.chunks);
      const len = head.readUInt32BE(0);
      if (len > this.maxFrameBytes) {
        this.options.onConnectionError?.(this.address, new Error(`bookie ${this.address} sent a frame of ${len} bytes, over ${this.maxFrameBytes}: connection closed`));
        socket.destroy();
        return;
      }
      if (this.buffered < 4 + len) return;
      const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
      const frame = all.subarray(4, 4 + len);
      const rest = all.subarray(4 + len);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
      this.dispatch(frame);
    }
  }

  private dispatch(frame: Buffer): void {
    let res: Response;
    try {
      res = fromBinary(ResponseSchema, frame);
    } catch (err) {
      this.options.onConnectionError?.(this.address, new Error(`bookie ${this.address} sent a response that does not parse: ${(err as Error).message}`));
      this.socket?.destroy();
      return;
    }
    const p = this.pending.get(res.header?.txnId ?? -1n);
    if (!p) return; // timed out already
    this.pending.delete(res.header!.txnId);
    clearTimeout(p.timer);
    p.resolve(res);
  }

  private fail(rc: number): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) {
      clearTimeout(p.timer);
      p.resolve(rc);
    }
  }
}

function splitAddress(address: string): [string, string] {
  const i = address.lastIndexOf(':');
  return [address.slice(0, i).replace(/^\[|\]$/g, ''), address.slice(i + 1)];
}

/** The connections of a store: one per bookie, made on first use. */
export class BookieClientPool {
  private readonly clients = new Map<string, BookieClient>();
  constructor(private readonly options: BookieClientOptions = {}) {}

  get(address: string): BookieClient {
    let c = this.clients.get(address);
    if (!c) {
      c = new BookieClient(address, this.options);
      this.clients.set(address, c);
    }
    return c;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
