/**
 * A bare TCP connection to a broker for tests that need to control every byte: requests are framed with
 * the codec (or written as raw bytes), response frames are collected as they arrive, and the test decides
 * when to read them. Nothing is retried or negotiated, so a test sees exactly what the broker did: answer,
 * stay silent, or close the connection.
 */
import { connect, type Socket } from 'node:net';
import type { ApiDescriptor } from '../../protocol/api.js';
import { decodeResponseFrame, encodeRequestFrame } from '../../protocol/headers.js';

export class RawConnection {
  private readonly frames: Buffer[] = [];
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private waiters: (() => void)[] = [];
  private nextCorrelationId = 1;
  /** Resolves when the broker (or the test) closed the connection. */
  readonly closed: Promise<void>;
  private isClosedFlag = false;

  private constructor(readonly socket: Socket) {
    this.closed = new Promise((resolve) =>
      socket.once('close', () => {
        this.isClosedFlag = true;
        this.wake();
        resolve();
      }),
    );
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      this.cut();
      this.wake();
    });
  }

  static connect(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host, port, noDelay: true });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new RawConnection(socket));
      });
    });
  }

  get isClosed(): boolean {
    return this.isClosedFlag;
  }

  /** Response frames received and not yet taken. */
  get buffered(): number {
    return this.frames.length;
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  private cut(): void {
    for (;;) {
      if (this.pendingBytes < 4) return;
      // Joins the chunks only once a whole frame is there: joining at every chunk copies a large frame over
      // and over (a 70 MB response in 64 KiB chunks took minutes).
      const head = this.pending[0]!.length >= 4 ? this.pending[0]! : Buffer.concat(this.pending).subarray(0, 4);
      const size = head.readInt32BE(0);
      if (this.pendingBytes < 4 + size) return;
      const joined = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
      this.frames.push(joined.subarray(4, 4 + size));
      const rest = joined.subarray(4 + size);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
    }
  }

  /** Writes raw bytes. */
  write(data: Buffer | readonly Buffer[]): void {
    if (Buffer.isBuffer(data)) this.socket.write(data);
    else for (const c of data) this.socket.write(c);
  }

  /** Encodes and writes a request; returns its correlation id. */
  send<Req>(api: ApiDescriptor<Req, unknown>, version: number, body: Req, correlationId = this.nextCorrelationId++, clientId: string | null = 'raw-test'): number {
    this.write(encodeRequestFrame(api, version, correlationId, clientId, body));
    return correlationId;
  }

  /**
   * The next response frame (without its size prefix), in arrival order: concurrent callers get successive
   * frames in the order they called. Rejects when the connection closes first or on timeout.
   */
  async nextFrame(timeoutMs = 10_000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const f = this.frames.shift();
      if (f) return f;
      if (this.isClosedFlag) throw new Error('connection closed before a response arrived');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Reads the next frame as a response of `api` at `version` and checks its correlation id. */
  async receive<Res>(api: ApiDescriptor<unknown, Res>, version: number, correlationId: number, timeoutMs = 10_000): Promise<Res> {
    const frame = await this.nextFrame(timeoutMs);
    const { correlationId: got, response } = decodeResponseFrame(api, version, frame);
    if (got !== correlationId) throw new Error(`expected correlation id ${correlationId}, got ${got}`);
    return response;
  }

  /** send + receive. */
  async request<Req, Res>(api: ApiDescriptor<Req, Res>, version: number, body: Req, timeoutMs = 10_000): Promise<Res> {
    const id = this.send(api, version, body);
    return this.receive(api, version, id, timeoutMs);
  }

  /** Resolves once the connection is closed; rejects after `timeoutMs`. */
  async waitClosed(timeoutMs = 10_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.closed,
        new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`connection still open after ${timeoutMs} ms`)), timeoutMs))),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Polls `check` until it returns a truthy value or the deadline passes (then throws with `what`). */
export async function waitFor<T>(what: string, check: () => T | Promise<T>, timeoutMs = 10_000, intervalMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
