// TxnOffsetCommit v0-6 (KIP-98) · v2: committed leader epoch · v3+: flexible; generation, member id and group
// instance id of the committing consumer (KIP-447): ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID ·
// v4: TRANSACTION_ABORTABLE (KIP-890) · v5: as v4 (transaction version 2 lets it add the partition to the
// transaction; Ledgerline finalizes transaction version 1, so clients send v4 at most within a transaction) ·
// v6: topics by id instead of name, both ways (KIP-1319): an id this node does not know is UNKNOWN_TOPIC_ID for
// each of its partitions; an unknown group with a generation is GROUP_ID_NOT_FOUND and a stale KIP-848 member
// epoch STALE_MEMBER_EPOCH. The offsets stay pending for the producer until its transaction's marker commits
// or aborts them (src/coordinator/txn-commits.ts).
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  TxnOffsetCommitApi,
  createTxnOffsetCommitResponse,
  type TxnOffsetCommitRequest,
  type TxnOffsetCommitResponse,
  type TxnOffsetCommitResponseTopic,
} from '../../protocol/messages/028-txn-offset-commit.gen.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { txnOffsetCommitErrorTopics } from '../coordinator/txn-commits.js';
import { defineHandler } from './handler.js';
import type { TopicService } from './services.js';

export const txnOffsetCommit = defineHandler({
  api: TxnOffsetCommitApi,
  uses: ['groups', 'topics'],
  versions: { min: 0, max: 6 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createTxnOffsetCommitResponse({ topics: txnOffsetCommitErrorTopics(req.topics, ErrorCode.COORDINATOR_NOT_AVAILABLE) });
    if (ctx.apiVersion < 6) return groups.txnOffsetCommit(req, ctx.apiVersion);
    return commitByTopicId(groups, ctx.services.topics, req, ctx.apiVersion);
  },
});

/** v6: names the topics for the coordinator, which keeps offsets by name, and answers by id. */
async function commitByTopicId(groups: GroupCoordinator, topics: Pick<TopicService, 'getById'>, req: TxnOffsetCommitRequest, version: number): Promise<TxnOffsetCommitResponse> {
  const unknown: TxnOffsetCommitResponseTopic[] = [];
  const idOf = new Map<string, string>();
  const named = [];
  for (const t of req.topics) {
    const topic = topics.getById(t.topicId);
    if (!topic) {
      unknown.push(...txnOffsetCommitErrorTopics([t], ErrorCode.UNKNOWN_TOPIC_ID));
      continue;
    }
    idOf.set(topic.name, t.topicId);
    named.push({ ...t, name: topic.name });
  }
  const res = named.length > 0 ? await groups.txnOffsetCommit({ ...req, topics: named }, version) : createTxnOffsetCommitResponse();
  res.topics = [...res.topics.map((t) => ({ ...t, name: '', topicId: idOf.get(t.name) ?? t.topicId })), ...unknown];
  return res;
}
