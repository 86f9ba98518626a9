import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RawConnection } from '../../support/raw-connection.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

describe('RawConnection', () => {
  it('takes a 64 MiB frame written in small chunks without joining the chunks at every arrival', async () => {
    const size = 64 * 1024 * 1024;
    server = createServer((socket) => {
      const head = Buffer.alloc(4);
      head.writeInt32BE(size);
      socket.write(head);
      const chunk = Buffer.alloc(16 * 1024, 7);
      for (let sent = 0; sent < size; sent += chunk.length) socket.write(chunk);
      const next = Buffer.alloc(5);
      next.writeInt32BE(1);
      next[4] = 9;
      socket.end(next);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const conn = await RawConnection.connect(port);
    const started = Date.now();
    const frame = await conn.nextFrame(20_000);
    expect(frame.length).toBe(size);
    expect(frame[size - 1]).toBe(7);
    expect([...(await conn.nextFrame(5_000))]).toEqual([9]);
    // Joining every chunk into one buffer again at each arrival copies ~128 GiB here: minutes, not seconds.
    expect(Date.now() - started).toBeLessThan(10_000);
    conn.destroy();
  });
});
