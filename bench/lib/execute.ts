/**
 * One workload against one bootstrap server: create the topics, run the load, delete the topics.
 * Shared by `run`, `compare` and `smoke`.
 */
import { randomBytes } from 'node:crypto';
import { errorByCode } from '../../protocol/error-codes.js';
import { KafkaClient, OffsetSpec } from '../../src/client/index.js';
import type { ConnectionOptions, KafkaClientOptions } from '../../src/client/index.js';
import { buildTemplate } from './batches.js';
import type { LoadResult, TopicPartition } from './load.js';
import { offsetsFor, runCatchUp, runLive } from './load.js';
import type { Workload } from './workload.js';
import { topicNames } from './workload.js';

export interface ExecuteOptions {
  bootstrap: string;
  workload: Workload;
  /** Messages per second, or null for max (a percent rate must be resolved by the caller). */
  rate: number | null;
  log: (line: string) => void;
  keepTopics?: boolean;
  /** The broker's CPU seconds so far, when the harness started it (StartedBroker.cpuSeconds). */
  brokerCpuSeconds?: () => number | null;
  /** The broker's GC pause seconds so far, likewise (StartedBroker.gcSeconds). */
  brokerGcSeconds?: () => Promise<number | null>;
  /** TLS and SASL for every connection of the run (a SASL_SSL listener: security.ts). */
  security?: Pick<ConnectionOptions, 'tls' | 'sasl'>;
}

export interface ExecuteResult {
  /** The measured phase: the live run, or the catch-up read. */
  result: LoadResult;
  /** Catch-up workloads: writing the backlog. */
  backlogWrite?: LoadResult;
  topics: string[];
  /** Seconds spent creating topics until every partition had a leader. */
  topicSetupSeconds: number;
}

export async function executeWorkload(o: ExecuteOptions): Promise<ExecuteResult> {
  const w = o.workload;
  const clientOptions: KafkaClientOptions = {
    bootstrap: o.bootstrap,
    clientId: 'ledgerline-bench',
    // The producers' lanes; the consumers connect a client of their own (consumer-thread.ts).
    connectionsPerBroker: Math.max(1, w.producers),
    requestTimeoutMs: 60_000,
    ...o.security,
  };
  const client = await KafkaClient.connect(clientOptions);
  const topics = topicNames(w, `bench-${w.name}-${randomBytes(3).toString('hex')}`);
  try {
    const t0 = Date.now();
    await createTopics(client, w, topics, o.log);
    const topicSetupSeconds = (Date.now() - t0) / 1000;
    o.log(`${topics.length} topic(s) × ${w.partitionsPerTopic} partition(s) ready in ${topicSetupSeconds.toFixed(1)} s`);
    const partitions: TopicPartition[] = [];
    for (const topic of topics) for (let p = 0; p < w.partitionsPerTopic; p++) partitions.push({ topic, partition: p });
    const template = await buildTemplate(w);
    const base = { client, clientOptions, workload: w, template, partitions, log: o.log, brokerCpuSeconds: o.brokerCpuSeconds, brokerGcSeconds: o.brokerGcSeconds };
    if (w.backlogBytes > 0) {
      o.log(`writing a backlog of ${(w.backlogBytes / 2 ** 30).toFixed(2)} GiB`);
      const start = await offsetsFor(client, partitions, OffsetSpec.EARLIEST);
      const backlogWrite = await runLive({
        ...base,
        rate: null,
        durationMs: 24 * 3600 * 1000,
        warmupMs: 0,
        produceOnly: true,
        stopAfterBytes: w.backlogBytes,
      });
      const end = await offsetsFor(client, partitions, OffsetSpec.LATEST);
      o.log(`backlog written at ${backlogWrite.produceRate.mibPerSec.toFixed(1)} MiB/s; reading it back`);
      const result = await runCatchUp({ ...base, rate: null, durationMs: w.durationSeconds * 1000, warmupMs: 0 }, start, end);
      return { result, backlogWrite, topics, topicSetupSeconds };
    }
    const result = await runLive({ ...base, rate: o.rate, durationMs: w.durationSeconds * 1000, warmupMs: w.warmupSeconds * 1000 });
    return { result, topics, topicSetupSeconds };
  } finally {
    if (!o.keepTopics) {
      await deleteTopics(client, topics).catch((e: unknown) => o.log(`could not delete the topics: ${(e as Error).message}`));
    }
    await client.close();
  }
}

async function createTopics(client: KafkaClient, w: Workload, topics: string[], log: (l: string) => void): Promise<void> {
  // Large partition counts take the controller a while: give it time in proportion.
  const timeoutMs = Math.max(60_000, w.topics * w.partitionsPerTopic * 20);
  // Kafka's controller refuses a request that creates more than 10,000 metadata records at once
  // (one per topic plus one per partition: POLICY_VIOLATION "excessively large batch operation").
  const perRequest = Math.max(1, Math.min(100, Math.floor(5000 / (w.partitionsPerTopic + 1))));
  for (let i = 0; i < topics.length; i += perRequest) {
    const chunk = topics.slice(i, i + perRequest);
    const results = await client.createTopics(
      chunk.map((name) => ({ name, numPartitions: w.partitionsPerTopic, replicationFactor: -1 })),
      { timeoutMs },
    );
    const failed = results.filter((r) => r.errorCode !== 0);
    if (failed.length > 0) {
      const f = failed[0]!;
      throw new Error(`CreateTopics failed for ${failed.length} topic(s), e.g. ${f.name}: ${errorByCode(f.errorCode).name} ${f.errorMessage ?? ''}`);
    }
  }
  log(`created ${topics.length} topic(s); waiting for leaders`);
  await client.waitForTopics(topics, { timeoutMs });
}

async function deleteTopics(client: KafkaClient, topics: string[]): Promise<void> {
  for (let i = 0; i < topics.length; i += 100) await client.deleteTopics(topics.slice(i, i + 100), { timeoutMs: 60_000 });
}
