/**
 * Readiness probe for a broker under test: one Metadata v1 request (all topics) on a fresh TCP
 * connection, encoded with the project's own wire primitives. A broker is ready when it answers with at
 * least one broker in the cluster, which a KRaft node does only once it has registered and is unfenced.
 */
import { connect } from 'node:net';
import { Reader } from '../../protocol/wire/reader.js';
import { Writer } from '../../protocol/wire/writer.js';

const METADATA = 3;

export interface ProbeAnswer {
  brokers: Array<{ nodeId: number; host: string; port: number }>;
  controllerId: number;
}

function metadataRequestV1(correlationId: number): Buffer {
  const body = new Writer();
  body.int16(METADATA);
  body.int16(1);
  body.int32(correlationId);
  body.nullableString('ledgerline-compat-probe');
  body.int32(-1); // topics: null, i.e. every topic
  const payload = body.toBuffer();
  const frame = new Writer();
  frame.int32(payload.length);
  frame.raw(payload);
  return frame.toBuffer();
}

function decodeMetadataV1(buf: Buffer, correlationId: number): ProbeAnswer {
  const r = new Reader(buf);
  const got = r.int32();
  const brokers: ProbeAnswer['brokers'] = [];
  const n = r.arrayLength(4);
  for (let i = 0; i < n && r.ok; i++) {
    const nodeId = r.int32();
    const host = r.string();
    const port = r.int32();
    r.nullableString(); // rack
    brokers.push({ nodeId, host, port });
  }
  const controllerId = r.int32();
  r.check();
  if (got !== correlationId) throw new Error(`correlation id ${got}, expected ${correlationId}`);
  return { brokers, controllerId };
}

/** Sends one Metadata request; rejects on refusal, timeout, a malformed answer or a closed connection. */
export function probeMetadata(host: string, port: number, timeoutMs: number): Promise<ProbeAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let have = 0;
    let settled = false;
    const finish = (err: Error | null, answer?: ProbeAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(answer as ProbeAnswer);
    };
    const timer = setTimeout(() => finish(new Error(`no Metadata answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('connect', () => socket.write(metadataRequestV1(7)));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      have += chunk.length;
      if (have < 4) return;
      const all = Buffer.concat(chunks);
      const size = all.readInt32BE(0);
      if (all.length < 4 + size) return;
      try {
        finish(null, decodeMetadataV1(all.subarray(4, 4 + size), 7));
      } catch (e) {
        finish(e instanceof Error ? e : new Error(String(e)));
      }
    });
    socket.on('error', (e) => finish(e));
    socket.on('close', () => finish(new Error('connection closed before a Metadata answer')));
  });
}
