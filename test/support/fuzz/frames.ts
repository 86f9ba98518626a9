/**
 * Frame-size lies, each on its own connection, around a valid request frame: a size prefix larger or
 * smaller than the body, negative, zero or over socket.request.max.bytes; part of a frame then a disconnect
 * or a half-close; and the valid frame dribbled in pieces of 1-7 bytes, which must be answered as usual.
 * The broker must close, wait or answer as Kafka's framing does, and never die.
 */
import type { Handler } from '../../../src/api/handler.js';
import { RawConnection } from '../raw-connection.js';
import { deadlineFor, exchange, expectationOf, judge, probeFrame } from './oracles.js';
import type { Prng } from './prng.js';

export interface FrameLie {
  what: string;
  /** The bytes sent, for the reproducer. */
  frame: Buffer;
  /** Runs the lie on a fresh connection to `port`; a finding kind when the broker misbehaved. */
  run: (port: number) => Promise<{ finding: string | null; detail: string }>;
}

function sizePrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n | 0, 0);
  return b;
}

/** One frame-size lie around `valid` (a complete request frame, size prefix included), chosen by `rng`. */
export function frameLie(rng: Prng, valid: Buffer, label: string, handlers: ReadonlyMap<number, Handler>, maxRequestBytes: number, deadlineMs: number): FrameLie {
  const lie = rng.pick(['larger', 'smaller', 'negative', 'zero', 'over-max', 'partial-disconnect', 'partial-half-close', 'dribble', 'header-only'] as const);
  const dl = deadlineMs;

  /** Sends bytes on a fresh connection and expects the broker to close it without answering. */
  const expectClose = (bytes: Buffer, what: string): FrameLie => ({
    what,
    frame: bytes,
    run: async (port) => {
      const c = await RawConnection.connect(port);
      try {
        c.write(bytes);
        await c.waitClosed(dl);
        return c.buffered === 0 ? { finding: null, detail: 'closed' } : { finding: 'frame-lie-answered', detail: `${c.buffered} response(s) before the close` };
      } catch {
        return { finding: 'frame-lie-not-closed', detail: `connection still open after ${dl} ms` };
      } finally {
        c.destroy();
      }
    },
  });

  switch (lie) {
    case 'negative':
      return expectClose(sizePrefix(rng.pick([-1, -2, -0x80000000, -valid.length])), 'negative frame size');
    case 'zero':
      return expectClose(sizePrefix(0), 'zero frame size');
    case 'over-max': {
      const size = rng.pick([maxRequestBytes + 1, maxRequestBytes * 2, 0x7fffffff]);
      return expectClose(Buffer.concat([sizePrefix(size), valid.subarray(4)]), `frame size ${size} over socket.request.max.bytes ${maxRequestBytes}`);
    }
    case 'smaller': {
      // The body is cut short by the prefix and the rest is read as the next frame: anything but a crash.
      const cut = rng.range(1, Math.max(1, valid.length - 5));
      const bytes = Buffer.from(valid);
      bytes.writeInt32BE(valid.length - 4 - cut, 0);
      return {
        what: `${label} with a size prefix ${cut} bytes short of its body`,
        frame: bytes,
        run: async (port) => {
          const c = await RawConnection.connect(port);
          c.write(bytes);
          c.write(probeFrame(0x7fffffff));
          await Promise.race([c.closed, c.nextFrame(Math.min(dl, 200)).catch(() => undefined)]);
          c.destroy();
          return { finding: null, detail: 'survived' };
        },
      };
    }
    case 'larger':
    case 'partial-disconnect':
    case 'partial-half-close':
    case 'header-only': {
      // The frame promises more than is sent: the broker must wait (no answer) and let go when the client does.
      const extra = lie === 'larger' ? rng.pick([1, 7, 1000, 1 << 20]) : 0;
      const bytes = Buffer.from(valid);
      if (extra) bytes.writeInt32BE(valid.length - 4 + extra, 0);
      const sent = lie === 'partial-disconnect' ? bytes.subarray(0, rng.range(1, valid.length - 1)) : lie === 'header-only' ? bytes.subarray(0, rng.range(1, 4)) : bytes;
      const halfClose = lie === 'partial-half-close' || (lie === 'larger' && rng.chance(0.5));
      const cutTo = lie === 'partial-half-close' ? bytes.subarray(0, rng.range(1, valid.length - 1)) : sent;
      return {
        what: `${label}: ${lie === 'larger' ? `size prefix ${extra} bytes over the body` : `${cutTo.length} of ${valid.length} bytes`}, then ${halfClose ? 'half-close' : 'disconnect'}`,
        frame: cutTo,
        run: async (port) => {
          const c = await RawConnection.connect(port);
          try {
            c.write(cutTo);
            const early = await c.nextFrame(50).then(
              () => true,
              () => false,
            );
            if (early && maxRequestBytes >= valid.length - 4 + extra) return { finding: 'answered-incomplete-frame', detail: 'a response came before the frame was complete' };
            if (!halfClose) return { finding: null, detail: 'disconnected' };
            c.socket.end();
            await c.waitClosed(dl);
            return { finding: null, detail: 'closed after half-close' };
          } catch {
            return { finding: 'half-closed-connection-kept', detail: `the broker kept a half-closed connection with a partial frame open for ${dl} ms` };
          } finally {
            c.destroy();
          }
        },
      };
    }
    case 'dribble': {
      // A valid frame written a few bytes at a time is the same request: it must be answered normally.
      return {
        what: `${label} written in pieces of 1-7 bytes`,
        frame: valid,
        run: async (port) => {
          const exp = expectationOf(valid, handlers, maxRequestBytes);
          const c = await RawConnection.connect(port);
          try {
            for (let at = 0; at < valid.length && !c.isClosed; ) {
              const n = rng.range(1, 7);
              c.write(valid.subarray(at, at + n));
              at += n;
              if (rng.chance(0.2)) await new Promise((r) => setImmediate(r));
            }
            const out = await exchange(c, Buffer.alloc(0), 0x7ffffffe, deadlineFor(exp, dl));
            const v = judge(exp, out);
            return { finding: v.finding, detail: v.detail };
          } finally {
            c.destroy();
          }
        },
      };
    }
  }
}

