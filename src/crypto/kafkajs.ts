/**
 * End-to-end encryption for kafkajs applications (structural types: nothing is imported from kafkajs).
 *
 *   const producer = encryptingKafkajsProducer(kafka.producer(), new RecordEncryptor({ keys, recipients: ['billing'] }));
 *   await producer.send({ topic, messages });                      // sealed before kafkajs sees them
 *
 *   const decryptor = new RecordDecryptor({ keys, onFailure: 'FAIL' });
 *   await consumer.run({ eachMessage: decryptingEachMessage(decryptor, async ({ message, e2e }) => ...) });
 *   await consumer.run({ eachBatch: decryptingEachBatch(decryptor, async ({ batch }) => ...) });
 *
 * `send`, `sendBatch`, and the same of transactions (`producer.transaction()`) are wrapped; everything else
 * of the producer is kafkajs' own. On the consumer side, FAIL throws from the handler (kafkajs then retries
 * the batch and the consumer does not move past the record), DISCARD skips the record, CONSUME passes it as
 * stored with `e2e.status === 'failed'`.
 */
import type { DecryptResult, RecordDecryptor } from './decryptor.js';
import type { RecordEncryptor } from './encryptor.js';
import type { E2eHeader, E2eRecord } from './record.js';

type HeaderValue = Buffer | string | (Buffer | string)[] | undefined;
export type KafkajsHeaders = { [key: string]: HeaderValue };

export interface KafkajsProducedMessage {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: KafkajsHeaders;
  partition?: number;
  timestamp?: string;
}

export interface KafkajsProducerRecord {
  topic: string;
  messages: KafkajsProducedMessage[];
  [option: string]: unknown;
}

export interface KafkajsProducerBatch {
  topicMessages?: { topic: string; messages: KafkajsProducedMessage[] }[];
  [option: string]: unknown;
}

interface Sender {
  send(record: KafkajsProducerRecord): Promise<unknown>;
  sendBatch(batch: KafkajsProducerBatch): Promise<unknown>;
}

const bytes = (v: Buffer | string | null | undefined): Buffer | null => (v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8'));

/** kafkajs headers (an object; a repeated key is an array) as an ordered list. */
export function headersFromKafkajs(h: KafkajsHeaders | undefined): E2eHeader[] {
  const out: E2eHeader[] = [];
  for (const [key, v] of Object.entries(h ?? {})) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) out.push({ key, value: bytes(one) });
  }
  return out;
}

/** An ordered header list as kafkajs headers. kafkajs cannot carry a null header value: it becomes empty. */
export function headersToKafkajs(list: readonly E2eHeader[]): KafkajsHeaders {
  const out: KafkajsHeaders = {};
  for (const { key, value } of list) {
    const v = value ?? Buffer.alloc(0);
    const had = out[key];
    out[key] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  return out;
}

async function encryptMessages(encryptor: RecordEncryptor, topic: string, messages: KafkajsProducedMessage[]): Promise<KafkajsProducedMessage[]> {
  return Promise.all(
    messages.map(async (m) => {
      const sealed = await encryptor.encrypt(topic, { key: bytes(m.key), value: bytes(m.value), headers: headersFromKafkajs(m.headers) });
      return { ...m, key: sealed.key, value: sealed.value, headers: headersToKafkajs(sealed.headers) };
    }),
  );
}

function wrapSender<T extends Sender>(sender: T, encryptor: RecordEncryptor): T {
  return new Proxy(sender, {
    get(target, prop, receiver) {
      if (prop === 'send') {
        return async (record: KafkajsProducerRecord) => target.send({ ...record, messages: await encryptMessages(encryptor, record.topic, record.messages) });
      }
      if (prop === 'sendBatch') {
        return async (batch: KafkajsProducerBatch) =>
          target.sendBatch({
            ...batch,
            topicMessages: await Promise.all((batch.topicMessages ?? []).map(async (tm) => ({ ...tm, messages: await encryptMessages(encryptor, tm.topic, tm.messages) }))),
          });
      }
      if (prop === 'transaction') {
        const begin = Reflect.get(target, prop, receiver) as () => Promise<Sender>;
        return async () => wrapSender(await begin.call(target), encryptor);
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** A kafkajs producer whose `send`/`sendBatch` (and its transactions') seal every message first. */
export function encryptingKafkajsProducer<T extends Sender>(producer: T, encryptor: RecordEncryptor): T {
  return wrapSender(producer, encryptor);
}

export interface KafkajsConsumedMessage {
  key: Buffer | null;
  value: Buffer | null;
  headers?: KafkajsHeaders;
  offset: string;
}

/** What the wrapped handlers add to kafkajs' payload. */
export interface E2eStatus {
  readonly status: DecryptResult['status'];
  /** The failure reason when status is 'failed'. */
  readonly reason: string | null;
  readonly error: Error | null;
}

/** A consumed kafkajs message decrypted; null when the failure action is DISCARD and it failed. Throws for FAIL. */
export async function decryptKafkajsMessage<M extends KafkajsConsumedMessage>(decryptor: RecordDecryptor, topic: string, message: M): Promise<{ message: M; e2e: E2eStatus } | null> {
  const r = await decryptor.decrypt(topic, { key: message.key, value: message.value, headers: headersFromKafkajs(message.headers) });
  if (r.record === null) return null;
  const e2e: E2eStatus = r.status === 'failed' ? { status: r.status, reason: r.error.reason, error: r.error } : { status: r.status, reason: null, error: null };
  if (r.status !== 'decrypted') return { message, e2e };
  return { message: { ...message, key: r.record.key, value: r.record.value, headers: headersToKafkajs(r.record.headers) }, e2e };
}

interface EachMessagePayloadLike {
  topic: string;
  message: KafkajsConsumedMessage;
}

/** Wraps an `eachMessage` handler: it sees decrypted messages, and `e2e` beside `message`. */
export function decryptingEachMessage<P extends EachMessagePayloadLike>(decryptor: RecordDecryptor, handler: (payload: P & { e2e: E2eStatus }) => Promise<void>): (payload: P) => Promise<void> {
  return async (payload: P) => {
    const d = await decryptKafkajsMessage(decryptor, payload.topic, payload.message);
    if (d === null) return;
    await handler({ ...payload, message: d.message as P['message'], e2e: d.e2e });
  };
}

interface EachBatchPayloadLike {
  batch: { topic: string; messages: KafkajsConsumedMessage[] };
}

/**
 * Wraps an `eachBatch` handler: `batch.messages` are decrypted (DISCARD leaves failed ones out), and
 * `e2e[i]` is the status of `batch.messages[i]`. The batch keeps kafkajs' methods (its prototype).
 */
export function decryptingEachBatch<P extends EachBatchPayloadLike>(decryptor: RecordDecryptor, handler: (payload: P & { e2e: E2eStatus[] }) => Promise<void>): (payload: P) => Promise<void> {
  return async (payload: P) => {
    const { batch } = payload;
    const decrypted = await Promise.all(batch.messages.map((m) => decryptKafkajsMessage(decryptor, batch.topic, m)));
    const kept = decrypted.filter((d): d is NonNullable<typeof d> => d !== null);
    const view = Object.create(batch, { messages: { value: kept.map((d) => d.message), enumerable: true } }) as P['batch'];
    await handler({ ...payload, batch: view, e2e: kept.map((d) => d.e2e) });
  };
}

export type { E2eRecord };
