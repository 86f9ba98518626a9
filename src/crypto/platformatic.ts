/**
 * End-to-end encryption for @platformatic/kafka applications (structural types: nothing is imported from
 * the client). Its messages carry headers as a Map keyed by Buffer (or string), keys and values as Buffers
 * when the client uses its default (de)serializers, which these wrappers expect.
 *
 *   const producer = encryptingPlatformaticProducer(new Producer({ ... }), encryptor);
 *   await producer.send({ messages: [{ topic, key, value, headers }] });
 *
 *   const stream = await consumer.consume({ topics: [topic] });
 *   for await (const { message, e2e } of decryptedPlatformaticMessages(stream, decryptor)) ...
 */
import type { DecryptResult, RecordDecryptor } from './decryptor.js';
import type { RecordEncryptor } from './encryptor.js';
import type { E2eHeader } from './record.js';
import type { E2eStatus } from './kafkajs.js';

type Key = Buffer | string;
export type PlatformaticHeaders = Map<Key, Buffer | undefined | null>;

export interface PlatformaticMessageToProduce {
  topic: string;
  key?: Buffer | null;
  value?: Buffer | null;
  headers?: PlatformaticHeaders | Map<Buffer, Buffer> | Record<string, Buffer>;
}

interface Sender {
  // The client's send is overloaded (promise and callback forms); only the promise form is wrapped.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  send: (...args: any[]) => unknown;
}

function headerList(h: PlatformaticHeaders | Map<Buffer, Buffer> | Record<string, Buffer> | undefined): E2eHeader[] {
  if (h === undefined) return [];
  const entries: [Key, Buffer | null | undefined][] = h instanceof Map ? [...(h as PlatformaticHeaders).entries()] : Object.entries(h);
  return entries.map(([k, v]) => ({ key: Buffer.isBuffer(k) ? k.toString('utf8') : k, value: v ?? null }));
}

/** Buffer keys, so that repeated names stay distinct entries as the client itself reads them. */
function headerMap(list: readonly E2eHeader[]): Map<Buffer, Buffer> {
  return new Map(list.map((h) => [Buffer.from(h.key, 'utf8'), h.value ?? Buffer.alloc(0)]));
}

/** A producer whose `send` seals every message first; everything else is the client's own. */
export function encryptingPlatformaticProducer<T extends Sender>(producer: T, encryptor: RecordEncryptor): T {
  return new Proxy(producer, {
    get(target, prop, receiver) {
      if (prop === 'send') {
        return async (options: { messages: PlatformaticMessageToProduce[] }) =>
          target.send({
            ...options,
            messages: await Promise.all(
              options.messages.map(async (m) => {
                const s = await encryptor.encrypt(m.topic, { key: m.key ?? null, value: m.value ?? null, headers: headerList(m.headers) });
                return { ...m, key: s.key ?? undefined, value: s.value ?? undefined, headers: headerMap(s.headers) };
              }),
            ),
          });
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

export interface PlatformaticConsumedMessage {
  topic: string;
  key: Buffer | null | undefined;
  value: Buffer | null | undefined;
  headers: Map<Key, Buffer | undefined | null> | Map<Buffer, Buffer>;
}

/** One consumed message decrypted; null when it failed under DISCARD; throws under FAIL. */
export async function decryptPlatformaticMessage<M extends PlatformaticConsumedMessage>(decryptor: RecordDecryptor, message: M): Promise<{ message: M; e2e: E2eStatus } | null> {
  const r: DecryptResult = await decryptor.decrypt(message.topic, { key: message.key ?? null, value: message.value ?? null, headers: headerList(message.headers) });
  if (r.record === null) return null;
  const e2e: E2eStatus = r.status === 'failed' ? { status: r.status, reason: r.error.reason, error: r.error } : { status: r.status, reason: null, error: null };
  if (r.status !== 'decrypted') return { message, e2e };
  return { message: { ...message, key: r.record.key, value: r.record.value, headers: headerMap(r.record.headers) }, e2e };
}

/** The messages of a consumer stream, decrypted, in order. */
export async function* decryptedPlatformaticMessages<M extends PlatformaticConsumedMessage>(stream: AsyncIterable<M>, decryptor: RecordDecryptor): AsyncGenerator<{ message: M; e2e: E2eStatus }> {
  for await (const m of stream) {
    const d = await decryptPlatformaticMessage(decryptor, m);
    if (d !== null) yield d;
  }
}
