/**
 * Request bodies built with the codec, for tests that talk to the broker over a RawConnection.
 */
import {
  createFetchRequestFetchPartition,
  createFetchRequestFetchTopic,
  createFetchRequestForgottenTopic,
  FetchApi,
  type FetchRequest,
} from '../../protocol/messages/001-fetch.gen.js';
import { ProduceApi, type ProduceRequest } from '../../protocol/messages/000-produce.gen.js';
import { MetadataApi, type MetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';

export interface FetchPartitionSpec {
  partition: number;
  offset: bigint;
  maxBytes?: number;
}

export interface FetchSpec {
  /** Topic name (Fetch < v13) or id (v13+); both may be given. */
  topics: { topic?: string; topicId?: string; partitions: FetchPartitionSpec[] }[];
  forgotten?: { topic?: string; topicId?: string; partitions: number[] }[];
  sessionId?: number;
  sessionEpoch?: number;
  maxWaitMs?: number;
  minBytes?: number;
  maxBytes?: number;
}

export function fetchRequest(spec: FetchSpec): FetchRequest {
  return FetchApi.request.create({
    maxWaitMs: spec.maxWaitMs ?? 0,
    minBytes: spec.minBytes ?? 1,
    maxBytes: spec.maxBytes ?? 50 * 1024 * 1024,
    sessionId: spec.sessionId ?? 0,
    sessionEpoch: spec.sessionEpoch ?? -1,
    topics: spec.topics.map((t) =>
      createFetchRequestFetchTopic({
        topic: t.topic ?? '',
        topicId: t.topicId ?? ZERO_UUID,
        partitions: t.partitions.map((p) => createFetchRequestFetchPartition({ partition: p.partition, fetchOffset: p.offset, partitionMaxBytes: p.maxBytes ?? 1024 * 1024 })),
      }),
    ),
    forgottenTopicsData: (spec.forgotten ?? []).map((f) => createFetchRequestForgottenTopic({ topic: f.topic ?? '', topicId: f.topicId ?? ZERO_UUID, partitions: f.partitions })),
  });
}

export function produceRequest(entries: { topic: string; partition: number; records: Buffer | null }[], acks: number = -1): ProduceRequest {
  const byTopic = new Map<string, { index: number; records: Buffer | null }[]>();
  for (const e of entries) {
    if (!byTopic.has(e.topic)) byTopic.set(e.topic, []);
    byTopic.get(e.topic)!.push({ index: e.partition, records: e.records });
  }
  return ProduceApi.request.create({
    transactionalId: null,
    acks,
    timeoutMs: 30_000,
    topicData: [...byTopic].map(([name, partitionData]) => ({ name, topicId: ZERO_UUID, partitionData })),
  });
}

export function metadataRequest(topics: string[] | null, allowAutoTopicCreation: boolean): MetadataRequest {
  return MetadataApi.request.create({
    topics: topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name })),
    allowAutoTopicCreation,
  });
}
