import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { probeMetadata } from '../../../../compat/lib/probe.js';
import { randomClusterId } from '../../../../compat/lib/brokers.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { Writer } from '../../../../protocol/wire/writer.js';

let server: Server | null = null;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A fake broker: answers each frame with what `answer` builds from the request's correlation id. */
function fakeBroker(answer: (correlationId: number, socket: Socket) => void): Promise<number> {
  return new Promise((resolve) => {
    server = createServer((socket) => {
      socket.once('data', (buf: Buffer) => {
        const r = new Reader(buf, 4);
        expect(r.int16()).toBe(3); // Metadata
        expect(r.int16()).toBe(1);
        answer(r.int32(), socket);
      });
    });
    server.listen(0, '127.0.0.1', () => resolve((server?.address() as AddressInfo).port));
  });
}

function metadataV1(correlationId: number, brokers: Array<[number, string, number]>): Buffer {
  const body = new Writer();
  body.int32(correlationId);
  body.int32(brokers.length);
  for (const [id, host, port] of brokers) {
    body.int32(id);
    body.string(host);
    body.int32(port);
    body.nullableString(null);
  }
  body.int32(brokers[0]?.[0] ?? -1); // controller
  body.int32(0); // topics
  const payload = body.toBuffer();
  const frame = Buffer.alloc(4);
  frame.writeInt32BE(payload.length);
  return Buffer.concat([frame, payload]);
}

describe('probeMetadata', () => {
  it('decodes the brokers of a Metadata v1 answer', async () => {
    const port = await fakeBroker((cid, s) => s.end(metadataV1(cid, [[1, '127.0.0.1', 9092]])));
    const answer = await probeMetadata('127.0.0.1', port, 2000);
    expect(answer.brokers).toEqual([{ nodeId: 1, host: '127.0.0.1', port: 9092 }]);
    expect(answer.controllerId).toBe(1);
  });

  it('rejects when the connection closes without an answer', async () => {
    const port = await fakeBroker((_cid, s) => s.end());
    await expect(probeMetadata('127.0.0.1', port, 2000)).rejects.toThrow(/closed/);
  });

  it('rejects at its deadline when the broker never answers', async () => {
    const port = await fakeBroker(() => undefined);
    await expect(probeMetadata('127.0.0.1', port, 300)).rejects.toThrow(/within 300 ms/);
  });

  it('rejects an answer whose correlation id is not the request\'s', async () => {
    const port = await fakeBroker((cid, s) => s.end(metadataV1(cid + 1, [[1, 'h', 1]])));
    await expect(probeMetadata('127.0.0.1', port, 2000)).rejects.toThrow(/correlation id/);
  });
});

describe('randomClusterId', () => {
  it('is 16 random bytes in base64url, never starting with a dash', () => {
    for (let i = 0; i < 200; i++) {
      const id = randomClusterId();
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
  });
});
