/**
 * Many topics at once, for the restart benchmarks: created with the admin API in batches that respect
 * the bound of 10,000 partitions per CreateTopics request, which Ledgerline shares with Kafka's KRaft
 * controller (POLICY_VIOLATION beyond, see the top-level README), and counted ready from one Metadata answer.
 */
import { performance } from 'node:perf_hooks';
import { errorByCode } from '../../protocol/error-codes.js';
import type { KafkaClient } from '../../src/client/index.js';

/** Partitions one CreateTopics request may create on Ledgerline (and on Kafka's KRaft controller). */
export const MAX_PARTITIONS_PER_REQUEST = 10_000;
/**
 * Records one CreateTopics request may write on Kafka's controller (QuorumController.MAX_RECORDS_PER_USER_OP):
 * a TopicRecord and a PartitionRecord per partition for each topic; past it every topic fails with
 * POLICY_VIOLATION ("Unable to perform excessively large batch operation."). Ledgerline applies the same bound.
 */
export const MAX_RECORDS_PER_REQUEST = 10_000;

/** `count` topics of `partitions` each, split into requests within both bounds above: [first, n] per request. */
export function topicBatches(count: number, partitions: number, maxRecords = MAX_RECORDS_PER_REQUEST): Array<[number, number]> {
  if (!Number.isInteger(count) || count < 1) throw new Error(`topic count must be a positive integer, got ${count}`);
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`partitions per topic must be a positive integer, got ${partitions}`);
  if (partitions + 1 > maxRecords) throw new Error(`${partitions} partitions per topic is over what one CreateTopics request may create (${maxRecords} records: a topic's and one per partition)`);
  const perRequest = Math.floor(maxRecords / (partitions + 1));
  const out: Array<[number, number]> = [];
  for (let first = 0; first < count; first += perRequest) out.push([first, Math.min(perRequest, count - first)]);
  return out;
}

export function topicName(prefix: string, i: number): string {
  return `${prefix}-${String(i).padStart(5, '0')}`;
}

/** Creates `count` topics of `partitions` each in batches; throws on the first topic the broker refuses. Resolves with the ms taken. */
export async function createTopicsBatched(client: KafkaClient, prefix: string, count: number, partitions: number, log: (l: string) => void): Promise<number> {
  const batches = topicBatches(count, partitions);
  const t0 = performance.now();
  let done = 0;
  let lastLog = t0;
  for (const [first, n] of batches) {
    const topics = Array.from({ length: n }, (_, i) => ({ name: topicName(prefix, first + i), numPartitions: partitions }));
    const results = await client.createTopics(topics, { timeoutMs: 120_000 });
    for (const r of results) {
      if (r.errorCode !== 0) throw new Error(`CreateTopics ${r.name}: ${errorByCode(r.errorCode).name}${r.errorMessage ? ` (${r.errorMessage})` : ''}`);
    }
    done += n;
    if (performance.now() - lastLog > 5000) {
      lastLog = performance.now();
      log(`  created ${done} of ${count} topics (${done * partitions} partitions)`);
    }
  }
  return performance.now() - t0;
}

/** Partitions of the topic `prefix` and the topics named `prefix-*` that have a leader and no error in one Metadata answer for every topic. */
export async function readyPartitions(client: KafkaClient, prefix: string): Promise<number> {
  const md = await client.metadata(null);
  let ready = 0;
  for (const t of md.topics) {
    if (t.errorCode !== 0 || !(t.name === prefix || t.name?.startsWith(`${prefix}-`))) continue;
    for (const p of t.partitions) if (p.errorCode === 0 && p.leaderId >= 0) ready++;
  }
  return ready;
}

/** Waits until `expected` partitions are ready (see readyPartitions); resolves with the ms it waited. */
export async function waitReady(client: KafkaClient, prefix: string, expected: number, deadlineMs: number): Promise<number> {
  const t0 = performance.now();
  let ready = 0;
  for (;;) {
    try {
      ready = await readyPartitions(client, prefix);
      if (ready >= expected) return performance.now() - t0;
    } catch {
      // The broker may still be loading; the deadline bounds the retries.
    }
    if (performance.now() - t0 > deadlineMs) throw new Error(`${ready} of ${expected} partitions ready after ${Math.round(deadlineMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
