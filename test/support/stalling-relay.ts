/**
 * A TCP relay for tests of network faults: it forwards to a port on 127.0.0.1, and `stall()` keeps every
 * connection open while relaying nothing (a peer that stops answering without closing: a paused process, a
 * dropped path), `resume()` relays again.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

/** Relays TCP to `port`; `stall()` keeps the connections open but relays nothing, `resume()` relays again. */
export class StallingRelay {
  private stalled = false;
  private readonly sockets = new Set<Socket>();
  private constructor(readonly server: Server, readonly port: number) {}

  static async start(targetPort: number): Promise<StallingRelay> {
    let relay!: StallingRelay;
    const server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
      for (const s of [client, upstream]) {
        relay.sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => {
          relay.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (d) => relay.stalled || upstream.write(d));
      upstream.on('data', (d) => relay.stalled || client.write(d));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    relay = new StallingRelay(server, (server.address() as { port: number }).port);
    return relay;
  }

  stall(): void {
    this.stalled = true;
  }
  resume(): void {
    this.stalled = false;
  }
  async close(): Promise<void> {
    this.stalled = true;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
