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
 * What a request means, and whether it is served at all, is the dispatch seam's business (dispatch.ts):
 * the connection hands it each frame and writes, in order, what comes back.
 */
import { setMaxListeners } from 'node:events';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { FrameSplitter, FrameTooLargeError } from '../../protocol/wire/frames.js';
import { NO_RESPONSE, type ConnectionInfo } from '../api/handler.js';
import { ANONYMOUS, type Principal } from '../api/services.js';
import type { SaslAuthenticator } from '../security/sasl/authenticator.js';
import type { Dispatcher, Outcome, SentHook, Session } from './dispatch.js';
import type { MemoryPool } from './memory-pool.js';

/** What a connection needs from the broker that accepted it. */
export interface ConnectionHost {
  readonly log: Logger;
  readonly dispatcher: Dispatcher;
  /** queued.max.request.bytes (memory-pool.ts). */
  readonly requestMemory: MemoryPool;
  /** socket.request.max.bytes. */
  readonly socketRequestMaxBytes: number;
  /** connections.max.idle.ms. */
  readonly connectionsMaxIdleMs: number;
  /** Said when a request waits for request memory (the host rate-limits the warning). */
  requestMemoryExhausted(size: number): void;
  connectionClosed(c: Connection): void;
}

/** Requests a connection may have in flight before it stops reading. */
const MAX_IN_FLIGHT = 100;
/** SaslHandshake's API key: on an authenticated SASL connection, the start of a KIP-368 re-authentication. */
const SASL_HANDSHAKE = 17;

/** Unwritten response bytes a connection may hold before it stops reading. */
const MAX_QUEUED_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * What the listener's security protocol gives a connection (src/security/): the principal a TLS client
 * certificate names (or ANONYMOUS), and on a SASL listener the exchange that must complete before any request
 * reaches the dispatcher.
 */
export interface ConnectionSecurity {
  readonly principal: Principal;
  /** Made for this connection once its session exists; called once. */
  readonly sasl?: (session: AuthenticatingSession) => SaslAuthenticator;
  /** sasl.server.max.receive.size: the frame bound until the SASL exchange completes. */
  readonly saslMaxReceiveBytes?: number;
  /** Called when the connection is closed because its SASL session expired (KIP-368). */
  readonly onSessionExpired?: () => void;
}

/** The session of a connection whose principal the SASL exchange sets once it completes. */
export type AuthenticatingSession = Omit<Session, 'principal'> & { principal: Principal };

/** A request's place in the response order: undefined while its handler runs. */
type Slot = { readonly chunks: Buffer[]; readonly onSent: SentHook | undefined; readonly close: boolean } | typeof NO_RESPONSE | undefined;

const EMPTY = Buffer.alloc(0);

let nextConnectionId = 1;

export class Connection {
  readonly info: ConnectionInfo;
  private readonly session: Session;
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
  /** The SASL exchange, while it has not completed (null on a listener without SASL, and after it). */
  private auth: SaslAuthenticator | null = null;
  /** The frames handed to the exchange, in order; null once it completed and every one of them was answered. */
  private authTail: Promise<void> | null = null;
  private readonly onSessionExpired: (() => void) | undefined;
  /** Quota throttling (KIP-219): the connection reads no request until then (performance.now()), 0 when not muted. */
  private mutedUntil = 0;
  private muteTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly socket: Socket,
    private readonly host: ConnectionHost,
    listenerName: string,
    security: ConnectionSecurity = { principal: ANONYMOUS },
  ) {
    this.info = {
      id: nextConnectionId++,
      remoteAddress: `${socket.remoteAddress}:${socket.remotePort}`,
      listenerName,
      clientSoftwareName: null,
      clientSoftwareVersion: null,
    };
    this.log = host.log.child({ conn: this.info.id, remote: this.info.remoteAddress });
    const session: AuthenticatingSession = { info: this.info, principal: security.principal, signal: this.abort.signal, log: this.log };
    this.session = session;
    this.decoder = new FrameSplitter({
      maxFrameBytes: host.socketRequestMaxBytes,
      limitName: 'socket.request.max.bytes',
      admit: (size) => this.admit(size),
    });
    this.onSessionExpired = security.onSessionExpired;
    if (security.sasl) {
      this.auth = security.sasl(session);
      this.authTail = Promise.resolve();
      // Kafka reads unauthenticated frames under sasl.server.max.receive.size (SaslServerAuthenticator).
      if (security.saslMaxReceiveBytes !== undefined) this.decoder.setLimit(Math.min(security.saslMaxReceiveBytes, host.socketRequestMaxBytes), 'sasl.server.max.receive.size');
    }
    // Every request in flight may wait on the connection's signal (a Fetch long-poll adds one listener for
    // its whole wait, JoinGroup two), so its limit is what MAX_IN_FLIGHT allows, not Node's default of 10.
    setMaxListeners(2 * MAX_IN_FLIGHT, this.abort.signal);
    socket.setNoDelay(true);
    socket.setTimeout(host.connectionsMaxIdleMs, () => {
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
    if (this.muteTimer) clearTimeout(this.muteTimer);
    // Memory of a frame still being received, or the place in the pool's queue, goes back now; requests
    // in flight give theirs back when their handlers finish.
    this.memoryWait?.();
    this.memoryWait = null;
    this.host.requestMemory.release(this.decoder.assembling);
    this.abort.abort();
    this.slots.clear();
    this.host.connectionClosed(this);
  }

  /**
   * The decoder's admission hook: takes a frame's bytes from the pool, or queues for them and stops reading
   * until they are granted (onMemoryGranted).
   */
  private admit(size: number): boolean {
    const pool = this.host.requestMemory;
    if (pool.tryAllocate(size)) return true;
    this.memoryWait = pool.wait(size, () => this.onMemoryGranted());
    this.host.requestMemoryExhausted(size);
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
        for (let j = i; j < frames.length; j++) this.host.requestMemory.release(frames[j]!.length);
        return;
      }
      this.onFrame(frames[i]!);
    }
    this.maybePause();
  }

  /** Handles one request frame; its pool memory (frame.length bytes) is released once it is done with. */
  private onFrame(frame: Buffer): void {
    if (this.authTail !== null) {
      this.onAuthFrame(frame);
      return;
    }
    const auth = this.auth;
    if (auth !== null) {
      // KIP-368, as Kafka's SocketServer and KafkaChannel: a SaslHandshake on a session with a lifetime starts a
      // re-authentication; any other request on an expired session closes the connection.
      if (frame.length >= 2 && frame.readInt16BE(0) === SASL_HANDSHAKE && auth.beginReauthentication()) {
        this.authTail = Promise.resolve();
        this.onAuthFrame(frame);
        return;
      }
      if (auth.sessionExpired()) {
        this.log.info({ principal: `${this.session.principal.type}:${this.session.principal.name}` }, 'closing connection: its SASL session expired without re-authentication (connections.max.reauth.ms or the credential\'s lifetime)');
        this.onSessionExpired?.();
        this.host.requestMemory.release(frame.length);
        this.close();
        return;
      }
    }
    const charge = frame.length;
    const outcome = this.host.dispatcher.dispatch(frame, this.session, performance.now());
    if (!(outcome instanceof Promise)) {
      this.host.requestMemory.release(charge);
      this.settle(this.nextSeq++, outcome);
      return;
    }
    const seq = this.nextSeq++;
    this.slots.set(seq, undefined);
    this.inFlight++;
    outcome.then((o) => {
      this.inFlight--;
      // The handler is done with the request's bytes (a Produce's batches are durable by now).
      this.host.requestMemory.release(charge);
      this.settle(seq, o);
    });
  }

  /**
   * A frame while the SASL exchange runs: frames are taken one at a time, in order (as Kafka reads the next only
   * once the exchange answered the last); those that come after its completion go on to the dispatcher through
   * the same queue, so that responses keep their order.
   */
  private onAuthFrame(frame: Buffer): void {
    const charge = frame.length;
    const seq = this.nextSeq++;
    this.slots.set(seq, undefined);
    this.inFlight++;
    const auth = this.auth!;
    const run = this.authTail!.then(async () => {
      let o: Outcome;
      if (this.closed) o = { kind: 'close' };
      else {
        const step = await auth.step(frame);
        if (step.kind === 'dispatch') o = await this.host.dispatcher.dispatch(frame, this.session, performance.now());
        else if (step.kind === 'close') o = { kind: 'close' };
        else o = { kind: 'respond', chunks: step.chunks, close: step.close };
        if (auth.complete) this.decoder.setLimit(this.host.socketRequestMaxBytes, 'socket.request.max.bytes');
      }
      this.inFlight--;
      this.host.requestMemory.release(charge);
      this.settle(seq, o);
    });
    this.authTail = run;
    void run.then(() => {
      // The exchange completed and nothing is queued behind this frame: frames go straight to the dispatcher.
      if (this.authTail === run && auth.complete) this.authTail = null;
    });
  }

  private settle(seq: number, o: Outcome): void {
    if (this.closed) return;
    if (o.kind === 'close') {
      this.close();
      return;
    }
    if (o.throttleMs !== undefined && o.throttleMs > 0) this.mute(o.throttleMs);
    this.respond(seq, o.chunks, o.onSent, o.close === true);
  }

  /**
   * A client over its quota: as Kafka's SocketServer mutes a throttled channel (KIP-219), the connection reads no
   * further request for `ms` (the answer itself is not held back); a longer throttle extends the mute.
   */
  private mute(ms: number): void {
    const until = performance.now() + ms;
    if (until <= this.mutedUntil) return;
    this.mutedUntil = until;
    if (this.muteTimer) clearTimeout(this.muteTimer);
    this.muteTimer = setTimeout(() => {
      this.muteTimer = null;
      this.mutedUntil = 0;
      this.maybeResume();
    }, ms);
    this.muteTimer.unref();
    this.maybePause();
  }

  /** Stores a finished response in its slot and writes every response that is now next in order. */
  private respond(seq: number, chunks: Buffer[] | typeof NO_RESPONSE, onSent: SentHook | undefined, close = false): void {
    this.slots.set(seq, chunks === NO_RESPONSE ? NO_RESPONSE : { chunks, onSent, close });
    for (;;) {
      const next = this.slots.get(this.nextToWrite);
      if (next === undefined) break;
      this.slots.delete(this.nextToWrite);
      this.nextToWrite++;
      if (next === NO_RESPONSE) continue;
      const written = performance.now();
      const done = next.onSent ? (): void => next.onSent!(written, performance.now()) : undefined;
      const { chunks: out } = next;
      if (out.length === 1) this.socket.write(out[0]!, done);
      else {
        this.socket.cork();
        for (let i = 0; i < out.length; i++) this.socket.write(out[i]!, i === out.length - 1 ? done : undefined);
        this.socket.uncork();
      }
      if (next.close) {
        // An answer after which the connection ends (a failed SASL exchange): written, then closed.
        this.socket.end();
        this.onClose();
        return;
      }
    }
    this.maybePause();
    this.maybeResume();
  }

  private overBudget(): boolean {
    return this.memoryWait !== null || this.mutedUntil !== 0 || this.inFlight >= MAX_IN_FLIGHT || this.socket.writableLength > MAX_QUEUED_RESPONSE_BYTES;
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
