// CreatePartitions v0-3 · v1: same as v0 · v2+: flexible.
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreatePartitionsApi, createCreatePartitionsResponse, createCreatePartitionsResponseCreatePartitionsTopicResult } from '../../protocol/messages/037-create-partitions.gen.js';
import { KafkaError } from '../cluster/topics.js';
import { defineHandler } from './handler.js';

export const createPartitions = defineHandler({
  api: CreatePartitionsApi,
  versions: { min: 0, max: 3 },
  async handle(req, ctx) {
    const { broker } = ctx;
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results = [];
    for (const t of req.topics) {
      const r = createCreatePartitionsResponseCreatePartitionsTopicResult({ name: t.name });
      results.push(r);
      try {
        if (counts.get(t.name)! > 1) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.');
        const existing = broker.topics.get(t.name);
        if (existing && t.assignments !== null) {
          if (t.assignments.length !== t.count - existing.partitions) {
            throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Increasing the number of partitions by ${t.count - existing.partitions} but ${t.assignments.length} assignments provided.`);
          }
          if (t.assignments.some((a) => a.brokerIds.some((b) => b !== broker.nodeId))) {
            throw new KafkaError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes a broker that is not registered.');
          }
        }
        await broker.topics.addPartitions(t.name, t.count, req.validateOnly);
      } catch (e) {
        if (!(e instanceof KafkaError)) throw e;
        r.errorCode = e.errorCode;
        r.errorMessage = e.message;
      }
    }
    return createCreatePartitionsResponse({ results });
  },
});
