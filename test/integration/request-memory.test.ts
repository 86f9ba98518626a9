/**
 * Request memory is bounded for the whole broker (queued.max.request.bytes): many connections each holding
 * most of a large frame make the broker stop reading them, not buffer them all. Its RSS stays bounded,
 * other clients are still served, and the memory comes back when the senders complete or go away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRequestFrame } from '../../protocol/headers.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { decodeResponseFrame } from '../../protocol/headers.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { metadataRequest } from '../support/requests.js';

const MiB = 1024 * 1024;
const FRAME = 16 * MiB;
const POOL = 40 * MiB;
const SENDERS = 16;

/** A Metadata request padded with trailing bytes (which Kafka, and Ledgerline, ignore) to FRAME bytes. */
function largeMetadataFrame(correlationId: number): Buffer {
  const request = Buffer.concat(encodeRequestFrame(MetadataApi, 12, correlationId, 'large-sender', metadataRequest([], false))).subarray(4);
  const out = Buffer.alloc(4 + FRAME);
  out.writeInt32BE(FRAME, 0);
  request.copy(out, 4);
  return out;
}

describe('request memory pool (queued.max.request.bytes)', () => {
  let broker: BrokerProcess;
  let adminUrl: string;

  beforeAll(async () => {
    broker = await BrokerProcess.start({
      configs: { 'socket.request.max.bytes': String(FRAME), 'queued.max.request.bytes': String(POOL), 'ledgerline.admin.listener': 'http://127.0.0.1:0' },
    });
    adminUrl = (JSON.parse(broker.logs.find((l) => l.includes('"admin HTTP endpoint listening"'))!) as { url: string }).url;
  });
  afterAll(async () => broker?.stop());

  async function metric(name: string): Promise<number> {
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    if (!m) throw new Error(`no ${name} in /metrics`);
    return Number(m[1]);
  }

  it('stops reading connections that hold half-sent frames once the pool is used, serves others, and gets the memory back', async () => {
    const healthy = await RawConnection.connect(broker.port);
    const senders: RawConnection[] = [];
    try {
      await healthy.request(MetadataApi, 12, metadataRequest([], false));
      expect(await metric('kafka_network_socketserver_memorypoolavailable')).toBe(POOL);
      const rssBefore = broker.rssKiB();

      const frames = Array.from({ length: SENDERS }, (_, i) => largeMetadataFrame(1000 + i));
      for (const f of frames) {
        const c = await RawConnection.connect(broker.port);
        senders.push(c);
        // All of the frame but its last MiB.
        c.write(f.subarray(0, f.length - MiB));
      }
      // Two frames fit in the pool next to its reserve for small requests; the other senders wait unread.
      await waitFor('all but two senders to wait for request memory', async () => (await metric('ledgerline_request_memory_waiting_connections')) === SENDERS - 2, 20_000);
      expect(await metric('kafka_network_socketserver_memorypoolused')).toBe(2 * FRAME);
      expect(await metric('kafka_network_socketserver_memorypoolavailable')).toBe(POOL - 2 * FRAME);
      // Let the broker read whatever it still would; its memory stays near the pool's size. Read without a
      // bound, the senders' bytes would be 16 × 15 MiB = 240 MiB.
      await expect(senders[0]!.nextFrame(500)).rejects.toThrow(/no response/);
      const grownMiB = (broker.rssKiB() - rssBefore) / 1024;
      expect(grownMiB).toBeLessThan(120);

      // Another client is still served: a small request uses the pool's reserve.
      const res = await healthy.request(MetadataApi, 12, metadataRequest([], false), 5000);
      expect(res.brokers).toHaveLength(1);
      expect(broker.logs.filter((l) => l.includes('request memory exhausted'))).toHaveLength(1);

      // Half the senders go away, half complete their frames: every completed one is answered in turn, as
      // memory is released, and in the end the pool holds nothing.
      for (const c of senders.slice(0, SENDERS / 2)) c.destroy();
      senders.slice(SENDERS / 2).forEach((c, k) => c.write(frames[SENDERS / 2 + k]!.subarray(FRAME + 4 - MiB)));
      await Promise.all(
        senders.slice(SENDERS / 2).map(async (c, k) => {
          const frame = await c.nextFrame(30_000);
          expect(decodeResponseFrame(MetadataApi, 12, frame).correlationId).toBe(1000 + SENDERS / 2 + k);
        }),
      );
      await waitFor('the pool to be empty again', async () => (await metric('kafka_network_socketserver_memorypoolused')) === 0 && (await metric('ledgerline_request_memory_waiting_connections')) === 0, 10_000);
      expect(await metric('kafka_network_socketserver_memorypoolavailable')).toBe(POOL);
    } finally {
      healthy.destroy();
      for (const c of senders) c.destroy();
    }
  });

  it('gives back the memory of a granted frame whose sender disconnects half-way', async () => {
    const c = await RawConnection.connect(broker.port);
    c.write(largeMetadataFrame(1).subarray(0, 4 * MiB));
    await waitFor('the frame to be granted', async () => (await metric('kafka_network_socketserver_memorypoolused')) === FRAME, 10_000);
    c.destroy();
    await waitFor('its memory to come back', async () => (await metric('kafka_network_socketserver_memorypoolused')) === 0, 10_000);
  });
});
