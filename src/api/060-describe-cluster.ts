// DescribeCluster v0-2 (KIP-700) · v1: endpointType (brokers or controllers, KIP-919) · v2: includeFencedBrokers
// and each broker's isFenced (KIP-1073); the live brokers of the cluster view are never fenced.
//
// As Kafka's AuthHelper.computeDescribeClusterResponse: a broker listener describes the brokers, a controller
// listener (controller.listener.names) the controllers, this node as its quorum's voter. An endpoint type that
// is neither is UNSUPPORTED_ENDPOINT_TYPE, the other type MISMATCHED_ENDPOINT_TYPE (INVALID_REQUEST in v0),
// each with Kafka's message and nothing else. The controller id is -1 when it is not among the nodes listed.
//
// Authorization: on a controller listener ALTER on the cluster first (ControllerApis.handleDescribeCluster,
// authorizeClusterOperation), else the error response, CLUSTER_AUTHORIZATION_FAILED. The cluster's authorized
// operations (KIP-430), only when asked: 0 without DESCRIBE on the cluster, else those the requester may do.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeClusterApi, createDescribeClusterResponse, createDescribeClusterResponseDescribeClusterBroker, type DescribeClusterResponse } from '../../protocol/messages/060-describe-cluster.gen.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './authorized-operations.js';
import { endpointFor } from './003-metadata.js';
import { AclOperation, CLUSTER_NAME, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

/** Kafka's EndpointType. */
const EndpointType = { BROKER: 1, CONTROLLER: 2 } as const;
const ENDPOINT_TYPE_NAME: Record<number, string> = { [EndpointType.BROKER]: 'BROKER', [EndpointType.CONTROLLER]: 'CONTROLLER' };

export const describeCluster = defineHandler({
  api: DescribeClusterApi,
  uses: ['node', 'cluster'],
  versions: { min: 0, max: 2 },
  handle(req, ctx) {
    const { node, cluster } = ctx.services;
    const listener = ctx.connection.listenerName;
    const expected = node.controllerListeners.includes(listener) ? EndpointType.CONTROLLER : EndpointType.BROKER;
    if (expected === EndpointType.CONTROLLER && !ctx.access.authorizeCluster(AclOperation.ALTER)) {
      return errorResponse(DescribeClusterApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as DescribeClusterResponse;
    }
    const refused = (mismatch: number, errorMessage: string): DescribeClusterResponse =>
      createDescribeClusterResponse({ errorCode: ctx.apiVersion === 0 ? ErrorCode.INVALID_REQUEST : mismatch, errorMessage });
    if (ENDPOINT_TYPE_NAME[req.endpointType] === undefined) return refused(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, `Unsupported endpoint type ${req.endpointType}`);
    if (req.endpointType !== expected) {
      return refused(ErrorCode.MISMATCHED_ENDPOINT_TYPE, `The request was sent to an endpoint of type ${ENDPOINT_TYPE_NAME[expected]}, but we wanted an endpoint of type ${ENDPOINT_TYPE_NAME[req.endpointType]}`);
    }
    let clusterAuthorizedOperations = AUTHORIZED_OPERATIONS_OMITTED;
    if (req.includeClusterAuthorizedOperations) {
      clusterAuthorizedOperations = ctx.access.authorizeCluster(AclOperation.DESCRIBE) ? ctx.access.authorizedOperations(ResourceType.CLUSTER, CLUSTER_NAME) : 0;
    }
    const res = createDescribeClusterResponse({ endpointType: expected, clusterId: node.clusterId, clusterAuthorizedOperations });
    let controllerId: number;
    if (expected === EndpointType.CONTROLLER) {
      // This node is its quorum's only voter and leader; its controller endpoint on the listener asked.
      const e = node.advertisedFor(listener);
      res.brokers.push(createDescribeClusterResponseDescribeClusterBroker({ brokerId: node.nodeId, host: e.host, port: e.port, rack: null, isFenced: false }));
      controllerId = node.nodeId;
    } else {
      // v2: isFenced; a live broker of the view is never fenced.
      for (const b of cluster.liveBrokers()) {
        const e = endpointFor(b, listener);
        if (e) res.brokers.push(createDescribeClusterResponseDescribeClusterBroker({ brokerId: b.nodeId, host: e.host, port: e.port, rack: b.rack, isFenced: false }));
      }
      controllerId = cluster.controllerId;
    }
    res.controllerId = res.brokers.some((b) => b.brokerId === controllerId) ? controllerId : -1;
    return res;
  },
});
