// TxnOffsetCommit v0-6 (KIP-98) · v2: committed leader epoch · v3+: flexible; generation, member id and group
// instance id of the committing consumer (KIP-447): ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID ·
// v4: TRANSACTION_ABORTABLE (KIP-890) · v5: as v4 (transaction version 2 lets it add the partition to the
// transaction; Ledgerline finalizes transaction version 1, so clients send v4 at most within a transaction) ·
// v6: topics by id instead of name, both ways (KIP-1319): an id this node does not know is UNKNOWN_TOPIC_ID for
// each of its partitions; an unknown group with a generation is GROUP_ID_NOT_FOUND and a stale KIP-848 member
// epoch STALE_MEMBER_EPOCH. The offsets stay pending for the producer until its transaction's marker commits
// or aborts them (src/coordinator/txn-commits.ts).
// Authorization as KafkaApis.handleTxnOffsetCommitRequest: WRITE on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition), READ on the group (GROUP_AUTHORIZATION_FAILED for
// every partition), then READ on each topic (v6: once its id is named, as OffsetCommit v10):
// TOPIC_AUTHORIZATION_FAILED for each partition of the others, which are not asked of the coordinator.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  TxnOffsetCommitApi,
  createTxnOffsetCommitResponse,
  type TxnOffsetCommitRequestTopic,
  type TxnOffsetCommitResponse,
  type TxnOffsetCommitResponseTopic,
} from '../../protocol/messages/028-txn-offset-commit.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { txnOffsetCommitErrorTopics } from '../coordinator/txn-commits.js';
import { AclOperation, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const txnOffsetCommit = defineHandler({
  api: TxnOffsetCommitApi,
  uses: ['groups', 'topics'],
  versions: { min: 0, max: 6 },
  async handle(req, ctx) {
    const v = ctx.apiVersion;
    // Kafka's getErrorResponse: the code for every partition of the request.
    const refusedAll = (code: number): TxnOffsetCommitResponse => errorResponse(TxnOffsetCommitApi.apiKey, v, req, { code, message: null }) as TxnOffsetCommitResponse;
    if (!ctx.access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId)) return refusedAll(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return refusedAll(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    // v6: each id named first (null: not known here); the request's name ("") is authorized for those, as Kafka.
    const names = req.topics.map((t) => (v >= 6 ? (ctx.services.topics.getById(t.topicId)?.name ?? null) : t.name));
    const allowed = ctx.access.allowedNames(AclOperation.READ, ResourceType.TOPIC, names.map((n, i) => n ?? req.topics[i]!.name));
    const groups = groupCoordinatorOf(ctx);
    if (!groups) {
      return createTxnOffsetCommitResponse({
        topics: req.topics.flatMap((t, i) => {
          const name = names[i];
          return txnOffsetCommitErrorTopics([t], name !== null && !allowed.has(name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.COORDINATOR_NOT_AVAILABLE);
        }),
      });
    }
    const refused: TxnOffsetCommitResponseTopic[] = [];
    const authorized: TxnOffsetCommitRequestTopic[] = [];
    const idOf = new Map<string, string>();
    req.topics.forEach((t, i) => {
      const name = names[i];
      if (name === null) refused.push(...txnOffsetCommitErrorTopics([t], ErrorCode.UNKNOWN_TOPIC_ID));
      else if (!allowed.has(name)) refused.push(...txnOffsetCommitErrorTopics([t], ErrorCode.TOPIC_AUTHORIZATION_FAILED));
      else {
        if (v >= 6) idOf.set(name, t.topicId);
        authorized.push({ ...t, name });
      }
    });
    // As Kafka: nothing left to commit, the coordinator is not asked.
    if (authorized.length === 0) return createTxnOffsetCommitResponse({ topics: refused });
    const res = await groups.txnOffsetCommit({ ...req, topics: authorized }, v);
    // v6: the coordinator keeps offsets by name; answered by id.
    if (v >= 6) res.topics = res.topics.map((t) => ({ ...t, name: '', topicId: idOf.get(t.name) ?? t.topicId }));
    res.topics.push(...refused);
    return res;
  },
});
