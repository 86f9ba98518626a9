/**
 * One client connection: frames in, responses out, in request order.
 *
 *   socket ──► FrameSplitter ──► header ──► handler (async) ──► slot[seq] ──► written in seq order
 *
 * Requests of a connection are handed to their handlers in arrival order and may run concurrently (a
 * pipelining producer shares group commits that way), but responses leave in request order: a handler
 * that finishes early waits in its slot until every earlier response is written. Produce with acks=0
 * takes a slot that is skipped.
 *
 * Backpressure is pull-based: while too many requests are in flight or the socket holds too many
 * unwritten response bytes, the socket is paused, so a client that never reads its responses stops being
 * read from instead of growing the broker's memory; reading resumes on drain.
 *
 * Request bytes come from the broker's request memory pool (queued.max.request.bytes, memory-pool.ts): a
 * frame's bytes are asked for when its size prefix is read and given back when its handler has finished
 * (or the frame is refused, or the connection closes half-way through it). While the pool cannot grant
 * them the socket is paused too, and reading resumes when the pool calls back, as Kafka mutes and unmutes
 * a channel on its MemoryPool.
 *
 * Kafka's rules for requests it cannot serve: an unknown API key, a version outside the served range or a
 * body that does not parse closes the connection; ApiVersions with a version it does not know is answered
 * in v0 with UNSUPPORTED_VERSION and the supported ranges (KIP-511).
 */
import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { CodecError } from '../../protocol/errors.js';
import { encodeResponseFrame, readRequestHeader, type RequestHeader } from '../../protocol/headers.js';
import { errorByCode } from '../../protocol/error-codes.js';
import { FrameSplitter, FrameTooLargeError } from '../../protocol/wire/frames.js';
import { Reader } from '../../protocol/wire/reader.js';
import { NO_RESPONSE, type ConnectionInfo, type RequestContext } from '../api/handler.js';
import type { Broker } from './broker.js';
import { findRefusal } from './refusals.js';

/** Requests a connection may have in flight before it stops reading. */
const MAX_IN_FLIGHT = 100;
/** Unwritten response bytes a connection may hold before it stops reading. */
const MAX_QUEUED_RESPONSE_BYTES = 64 * 1024 * 1024;

type Slot = Buffer[] | typeof NO_RESPONSE | undefined;

const EMPTY = Buffer.alloc(0);

let nextConnectionId = 1;

export class Connection {
  readonly info: ConnectionInfo;
  private readonly decoder: FrameSplitter;
  private readonly abort = new AbortController();
  private readonly slots = new Map<number, Slot>();
  private nextSeq = 0;
  private nextToWrite = 0;
  private inFlight = 0;
  private paused = false;
  private closed = false;
  /** Set by drain(): reading stays paused whatever the budget says. */
  private draining = false;
  private drained: (() => void) | null = null;
  /** Withdraws this connection's request from the memory pool's queue while it waits for a grant. */
  private memoryWait: (() => void) | null = null;
  private readonly log: Logger;

  constructor(
    private readonly socket: Socket,
    private readonly broker: Broker,
    listenerName: string,
  ) {
    this.info = {
      id: nextConnectionId++,
      remoteAddress: `${socket.remoteAddress}:${socket.remotePort}`,
      listenerName,
      clientSoftwareName: null,
      clientSoftwareVersion: null,
    };
    this.log = broker.log.child({ conn: this.info.id, remote: this.info.remoteAddress });
    this.decoder = new FrameSplitter({
      maxFrameBytes: broker.config.socketRequestMaxBytes,
      limitName: 'socket.request.max.bytes',
      admit: (size) => this.admit(size),
    });
    // Every request in flight may wait on the connection's signal (a Fetch long-poll adds one listener for
    // its whole wait, JoinGroup two), so its limit is what MAX_IN_FLIGHT allows, not Node's default of 10.
    setMaxListeners(2 * MAX_IN_FLIGHT, this.abort.signal);
    socket.setNoDelay(true);
    socket.setTimeout(broker.config.connectionsMaxIdleMs, () => {
      this.log.debug('closing idle connection');
      this.close();
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('drain', () => this.maybeResume());
    socket.on('error', (err) => this.log.debug({ err }, 'socket error'));
    socket.on('close', () => this.onClose());
  }

  /** True once the socket is gone. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Graceful shutdown: stops reading new requests and resolves once every request already read has been
   * answered (or `timeoutMs` passed, or the peer went away).
   */
  async drain(timeoutMs: number): Promise<void> {
    if (this.closed) return;
    this.draining = true;
    this.socket.pause();
    // Long waits (Fetch long-polls, JoinGroup) end now and answer with what they have.
    this.abort.abort();
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && (this.inFlight > 0 || this.slots.size > 0 || this.socket.writableLength > 0) && Date.now() < deadline) {
      await new Promise<void>((r) => {
        this.drained = r;
        setTimeout(r, Math.min(50, Math.max(0, deadline - Date.now()))).unref();
      });
    }
  }

  close(): void {
    if (this.closed) return;
    this.socket.destroy();
    this.onClose();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    // Memory of a frame still being received, or the place in the pool's queue, goes back now; requests
    // in flight give theirs back when their handlers finish.
    this.memoryWait?.();
    this.memoryWait = null;
    this.broker.requestMemory.release(this.decoder.assembling);
    this.abort.abort();
    this.slots.clear();
    this.broker.connectionClosed(this);
  }

  /**
   * The decoder's admission hook: takes a frame's bytes from the pool, or queues for them and stops reading
   * until they are granted (onMemoryGranted).
   */
  private admit(size: number): boolean {
    const pool = this.broker.requestMemory;
    if (pool.tryAllocate(size)) return true;
    this.memoryWait = pool.wait(size, () => this.onMemoryGranted());
    this.broker.requestMemoryExhausted(size);
    this.log.debug({ size, used: pool.used, capacity: pool.capacity }, 'waiting for request memory');
    this.maybePause();
    return false;
  }

  /** Called by the pool, inside another request's release: decoding goes on in a later turn. */
  private onMemoryGranted(): void {
    this.memoryWait = null;
    this.decoder.resume();
    setImmediate(() => {
      // A draining connection reads no new request: the granted memory goes back when it closes.
      if (this.closed || this.draining) return;
      this.onData(EMPTY);
      this.maybeResume();
    });
  }

  private onData(chunk: Buffer): void {
    let frames: Buffer[];
    try {
      frames = this.decoder.push(chunk);
    } catch (e) {
      if (e instanceof FrameTooLargeError) this.log.warn({ size: e.size, max: e.max }, 'closing connection: request size out of bounds');
      else this.log.error({ err: e }, 'closing connection: framing failed');
      this.close();
      return;
    }
    for (let i = 0; i < frames.length; i++) {
      if (this.closed) {
        // Frames read before the close was decided: their memory goes back unused.
        for (let j = i; j < frames.length; j++) this.broker.requestMemory.release(frames[j]!.length);
        return;
      }
      this.onFrame(frames[i]!);
    }
    this.maybePause();
  }

  /** Handles one request frame; its pool memory (frame.length bytes) is released once it is done with. */
  private onFrame(frame: Buffer): void {
    const charge = frame.length;
    const pool = this.broker.requestMemory;
    const r = new Reader(frame);
    const { header, api, versionKnown } = readRequestHeader(r);
    if (!r.ok) {
      pool.release(charge);
      this.log.warn('closing connection: request header does not parse');
      this.close();
      return;
    }
    const handler = this.broker.handlers.get(header.requestApiKey);
    const version = header.requestApiVersion;
    const served = handler !== undefined && version >= handler.versions.min && version <= handler.versions.max;
    if (!served) {
      pool.release(charge);
      if (api !== undefined && api.apiKey === 18 && handler !== undefined) {
        this.respond(this.nextSeq++, this.broker.apiVersionsFallback(header));
        return;
      }
      // Kafka closes the connection; the refusal is logged once per client and API, as others are.
      this.broker.refusals.report({
        clientId: header.clientId,
        remoteAddress: this.info.remoteAddress,
        apiKey: header.requestApiKey,
        api: api?.name ?? `ApiKey ${header.requestApiKey}`,
        apiVersion: version,
        correlationId: header.correlationId,
        reason: handler
          ? `version ${version} is outside the served ${handler.versions.min}-${handler.versions.max}${versionKnown ? '' : ' (and unknown to the schema)'}; closing the connection`
          : `${api ? 'API not served' : 'unknown API key'}; closing the connection`,
        errorCode: null,
        resource: null,
        level: 'info',
      });
      this.close();
      return;
    }
    let request: unknown;
    try {
      request = handler.api.request.decode(r, version);
      // Kafka reads a request body and ignores bytes after it (librdkafka 2.16 sends three after its
      // Metadata v12 request), so trailing bytes are tolerated, not treated as a malformed request.
      r.check();
      if (r.remaining > 0) this.log.debug({ apiKey: header.requestApiKey, apiVersion: version, trailing: r.remaining }, 'ignoring trailing request bytes');
    } catch (e) {
      pool.release(charge);
      this.log.warn(
        { err: e instanceof CodecError ? e.message : e, apiKey: header.requestApiKey, apiVersion: version, clientId: header.clientId, head: frame.subarray(0, 128).toString('hex') },
        'closing connection: request body does not parse',
      );
      this.close();
      return;
    }

    this.broker.countRequest(header.requestApiKey, handler.api.name);
    const seq = this.nextSeq++;
    this.slots.set(seq, undefined);
    this.inFlight++;
    let refusedBecause: string | null = null;
    const ctx: RequestContext = {
      broker: this.broker,
      header,
      apiVersion: version,
      connection: this.info,
      signal: this.abort.signal,
      refuse: (reason) => {
        refusedBecause ??= reason;
      },
    };
    let result;
    try {
      result = handler.handle(request, ctx);
    } catch (e) {
      this.failed(e, header.requestApiKey, version, charge);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (res) => this.finish(seq, handler.api, version, header, res, refusedBecause, charge),
        (e: unknown) => this.failed(e, header.requestApiKey, version, charge),
      );
    } else {
      this.finish(seq, handler.api, version, header, result, refusedBecause, charge);
    }
  }

  /** The dispatch seam's refusal check: logs (once) a request the handler refused or answered with a refusal code. */
  private noteRefusal(api: { apiKey: number; name: string }, version: number, header: RequestHeader, res: unknown, reason: string | null): void {
    const found = res === NO_RESPONSE ? null : findRefusal(res);
    if (reason === null && found === null) return;
    this.broker.refusals.report({
      clientId: header.clientId,
      remoteAddress: this.info.remoteAddress,
      apiKey: api.apiKey,
      api: api.name,
      apiVersion: version,
      correlationId: header.correlationId,
      reason: reason ?? found!.errorMessage ?? errorByCode(found!.errorCode).message ?? errorByCode(found!.errorCode).name,
      errorCode: found?.errorCode ?? null,
      resource: found?.resource ?? null,
      level: reason !== null || found!.topLevel ? 'warn' : 'info',
    });
  }

  private finish(seq: number, api: { apiKey: number; name: string }, version: number, header: RequestHeader, res: unknown, refusedBecause: string | null, charge: number): void {
    this.inFlight--;
    // The handler is done with the request's bytes (a Produce's batches are durable by now).
    this.broker.requestMemory.release(charge);
    if (this.closed) return;
    const correlationId = header.correlationId;
    this.noteRefusal(api, version, header, res, refusedBecause);
    if (res === NO_RESPONSE) {
      this.respond(seq, NO_RESPONSE);
      return;
    }
    let chunks: Buffer[];
    try {
      chunks = encodeResponseFrame(this.broker.handlers.get(api.apiKey)!.api, version, correlationId, res);
    } catch (e) {
      this.failed(e, api.apiKey, version, 0);
      return;
    }
    this.respond(seq, chunks);
  }

  private failed(e: unknown, apiKey: number, apiVersion: number, charge: number): void {
    this.inFlight--;
    this.broker.requestMemory.release(charge);
    if (this.closed) return;
    this.log.error({ err: e, apiKey, apiVersion }, 'closing connection: handler failed');
    this.close();
  }

  /** Stores a finished response in its slot and writes every response that is now next in order. */
  private respond(seq: number, slot: Exclude<Slot, undefined>): void {
    this.slots.set(seq, slot);
    for (;;) {
      const next = this.slots.get(this.nextToWrite);
      if (next === undefined) break;
      this.slots.delete(this.nextToWrite);
      this.nextToWrite++;
      if (next === NO_RESPONSE) continue;
      if (next.length === 1) this.socket.write(next[0]!);
      else {
        this.socket.cork();
        for (const c of next) this.socket.write(c);
        this.socket.uncork();
      }
    }
    this.maybePause();
    this.maybeResume();
  }

  private overBudget(): boolean {
    return this.memoryWait !== null || this.inFlight >= MAX_IN_FLIGHT || this.socket.writableLength > MAX_QUEUED_RESPONSE_BYTES;
  }

  private maybePause(): void {
    if (!this.paused && !this.closed && this.overBudget()) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private maybeResume(): void {
    if (this.drained && this.inFlight === 0 && this.slots.size === 0) {
      const d = this.drained;
      this.drained = null;
      d();
    }
    if (this.paused && !this.closed && !this.draining && !this.overBudget()) {
      this.paused = false;
      this.socket.resume();
    }
  }
}
