// FindCoordinator v0-6 · v1: key type (0 group, 1 transaction), error message, throttle time · v3+: flexible
// · v4: several keys per request (KIP-699), one result each · v6: share-group key type (2, KIP-932).
// Advertised from v0: librdkafka ≤ 2.11 only uses the group coordinator when v0 is in the range (KAFKA-18270).
// The coordinator of a key is the owner of its internal topic partition (Kafka's abs(hashCode) % partitions of
// __consumer_offsets or __transaction_state), as the cluster view says.
// Authorization as KafkaApis.getCoordinator, key by key (one result each from v4; before v4 the error response):
// DESCRIBE on the group (GROUP_AUTHORIZATION_FAILED) or on the transactional id
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) before anything about the coordinator is told; a share key (v6)
// needs CLUSTER_ACTION on the cluster, the whole request refused with CLUSTER_AUTHORIZATION_FAILED otherwise.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { FindCoordinatorApi, createFindCoordinatorResponse, createFindCoordinatorResponseCoordinator, type FindCoordinatorResponse } from '../../protocol/messages/010-find-coordinator.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { endpointFor } from './003-metadata.js';
import { AclOperation, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler, type RequestContext } from './handler.js';

/** Kafka's CoordinatorType. */
const CoordinatorType = { GROUP: 0, TRANSACTION: 1, SHARE: 2 } as const;

interface Found {
  readonly errorCode: number;
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
}

function find(ctx: RequestContext<'cluster' | 'groups' | 'transactions'>, keyType: number, key: string): Found {
  // Kafka's Node.noNode() for errors.
  const none = (errorCode: number): Found => ({ errorCode, nodeId: -1, host: '', port: -1 });
  if (keyType === CoordinatorType.GROUP && !ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, key)) return none(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (keyType === CoordinatorType.TRANSACTION && !ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key)) {
    return none(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
  }
  // No share coordinator here: a share key is INVALID_REQUEST (after the cluster check of handle, from v6).
  if (keyType === CoordinatorType.SHARE) return none(ErrorCode.INVALID_REQUEST);
  // The coordinator's internal topic is not there yet (a member waits for its replicas: src/coordinator/internal-topic.ts).
  if (keyType === CoordinatorType.GROUP && !groupCoordinatorOf(ctx)) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  if (keyType === CoordinatorType.TRANSACTION && !ctx.services.transactions.isActive) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  const { cluster } = ctx.services;
  const at = cluster.coordinator(keyType === CoordinatorType.GROUP ? 'group' : 'transaction', key);
  const broker = at.nodeId >= 0 ? cluster.broker(at.nodeId) : undefined;
  const e = broker && endpointFor(broker, ctx.connection.listenerName);
  // No live owner of the key's partition (or no endpoint to give): Kafka's COORDINATOR_NOT_AVAILABLE.
  if (!e) return none(ErrorCode.COORDINATOR_NOT_AVAILABLE);
  return { errorCode: ErrorCode.NONE, nodeId: at.nodeId, host: e.host, port: e.port };
}

export const findCoordinator = defineHandler({
  api: FindCoordinatorApi,
  uses: ['cluster', 'groups', 'transactions'],
  versions: { min: 0, max: 6 },
  handle(req, ctx) {
    const v = ctx.apiVersion;
    const keyType = v >= 1 ? req.keyType : CoordinatorType.GROUP;
    if (keyType !== CoordinatorType.GROUP && keyType !== CoordinatorType.TRANSACTION && keyType !== CoordinatorType.SHARE) {
      // Kafka: CoordinatorType.forId throws InvalidRequestException for an unknown type.
      const errorCode = ErrorCode.INVALID_REQUEST;
      const message = `Unknown coordinator type received: ${keyType}`;
      if (v >= 4) {
        return createFindCoordinatorResponse({
          coordinators: req.coordinatorKeys.map((key) => createFindCoordinatorResponseCoordinator({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage: message })),
        });
      }
      return createFindCoordinatorResponse({ errorCode, errorMessage: message, nodeId: -1, host: '', port: -1 });
    }
    // Kafka's authorizeClusterOperation for each share key of a v6 request: its denial fails the whole request.
    const shareRefused = (): boolean => keyType === CoordinatorType.SHARE && v >= 6 && !ctx.access.authorizeCluster(AclOperation.CLUSTER_ACTION);
    const refused = (): FindCoordinatorResponse =>
      errorResponse(FindCoordinatorApi.apiKey, v, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as FindCoordinatorResponse;
    if (v >= 4) {
      const coordinators = [];
      for (const key of req.coordinatorKeys) {
        if (shareRefused()) return refused();
        const f = find(ctx, keyType, key);
        coordinators.push(createFindCoordinatorResponseCoordinator({ key, ...f, errorMessage: f.errorCode === ErrorCode.NONE ? null : errorByCode(f.errorCode).message }));
      }
      return createFindCoordinatorResponse({ coordinators });
    }
    const f = find(ctx, keyType, req.key);
    return createFindCoordinatorResponse({ ...f, errorMessage: f.errorCode === ErrorCode.NONE ? null : errorByCode(f.errorCode).message });
  },
});
