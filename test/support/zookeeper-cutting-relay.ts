/**
 * A TCP relay in front of ZooKeeper that drops a connection when the client sends a chosen request: the
 * request never reaches the server and the client sees ConnectionLoss for it, as after a network fault at that
 * moment. The session survives (the client reconnects within its timeout), so this tests what a client does
 * with one failed call, which a stalled or closed path (StallingRelay) cannot aim at.
 *
 * Client to server, ZooKeeper frames every message with its length (jute, big-endian):
 *
 *   first frame on a connection: ConnectRequest (relayed unread)
 *   +-----------+-----------------------------------------------------+
 *   | len int32 | protocolVersion, lastZxidSeen, timeOut, sessionId.. |
 *   +-----------+-----------------------------------------------------+
 *   every later frame: a request
 *   +-----------+-----------+------------+------------------------------------------------+
 *   | len int32 | xid int32 | type int32 | body (exists 3, getData 4: path ustring, watch bool) |
 *   +-----------+-----------+------------+------------------------------------------------+
 *
 * ustring = int32 byte length + UTF-8; the path on the wire carries the client's chroot.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** The request types whose path and watch flag the relay reads (ZooDefs.OpCode). */
export const ZK_OP = { exists: 3, getData: 4 } as const;
/** Larger frames are a broken stream here, not a request to parse (ZooKeeper's jute.maxbuffer is ~1 MiB). */
const MAX_FRAME = 16 << 20;

export interface ZooKeeperRequest {
  readonly type: number;
  /** For exists and getData: the path (with the chroot) and whether the request sets a watch. */
  readonly path?: string;
  readonly watch?: boolean;
}

export class ZooKeeperCuttingRelay {
  /** Connections dropped on a matching request so far. */
  cuts = 0;
  #cutWhile: ((request: ZooKeeperRequest) => boolean) | null = null;
  #cutsLeft = 0;
  readonly #sockets = new Set<Socket>();
  private constructor(
    readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetPort: number): Promise<ZooKeeperCuttingRelay> {
    let relay!: ZooKeeperCuttingRelay;
    const server = createServer((client) => relay.#relay(client, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    relay = new ZooKeeperCuttingRelay(server, (server.address() as { port: number }).port);
    return relay;
  }

  /** Drops the connection on each of the next `times` requests that `match`, before they reach the server (0: none). */
  cutOn(match: (request: ZooKeeperRequest) => boolean, times: number): void {
    this.#cutWhile = match;
    this.#cutsLeft = times;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #relay(client: Socket, targetPort: number): void {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      this.#sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        this.#sockets.delete(s);
        drop();
      });
    }
    upstream.on('data', (d) => client.write(d));
    let pending = Buffer.alloc(0);
    let handshaken = false;
    client.on('data', (d) => {
      pending = pending.length === 0 ? d : Buffer.concat([pending, d]);
      while (pending.length >= 4) {
        const length = pending.readInt32BE(0);
        if (length < 0 || length > MAX_FRAME) return drop();
        if (pending.length < 4 + length) return;
        const frame = pending.subarray(0, 4 + length);
        pending = pending.subarray(4 + length);
        if (handshaken && this.#shouldCut(frame)) {
          this.cuts++;
          return drop();
        }
        handshaken = true;
        upstream.write(frame);
      }
    });
  }

  #shouldCut(frame: Buffer): boolean {
    if (this.#cutWhile === null || this.#cutsLeft === 0 || frame.length < 12) return false;
    const request = parseRequest(frame);
    if (!this.#cutWhile(request)) return false;
    if (--this.#cutsLeft === 0) this.#cutWhile = null;
    return true;
  }
}

function parseRequest(frame: Buffer): ZooKeeperRequest {
  const type = frame.readInt32BE(8);
  if ((type !== ZK_OP.exists && type !== ZK_OP.getData) || frame.length < 16) return { type };
  const pathLength = frame.readInt32BE(12);
  if (pathLength < 0 || 16 + pathLength + 1 > frame.length) return { type };
  return { type, path: frame.toString('utf8', 16, 16 + pathLength), watch: frame[16 + pathLength] !== 0 };
}
