// DescribeCluster v0-2 (KIP-700) · v0+: flexible · v1: endpointType (brokers or controllers, KIP-919) · v2:
// includeFencedBrokers and each broker's isFenced (KIP-1073); the live brokers of the cluster view are never fenced.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeClusterApi, createDescribeClusterResponse, createDescribeClusterResponseDescribeClusterBroker } from '../../protocol/messages/060-describe-cluster.gen.js';
import { AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_OPERATIONS } from './authorized-operations.js';
import { endpointFor } from './003-metadata.js';
import { defineHandler } from './handler.js';

const ENDPOINT_BROKERS = 1;

export const describeCluster = defineHandler({
  api: DescribeClusterApi,
  uses: ['node', 'cluster'],
  versions: { min: 0, max: 2 },
  handle(req, ctx) {
    const res = createDescribeClusterResponse({
      endpointType: req.endpointType,
      clusterId: ctx.services.node.clusterId,
      controllerId: ctx.services.cluster.controllerId,
      clusterAuthorizedOperations: req.includeClusterAuthorizedOperations ? CLUSTER_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
    });
    if (req.endpointType !== ENDPOINT_BROKERS) {
      // Kafka: brokers do not describe controller endpoints (UNSUPPORTED_ENDPOINT_TYPE).
      res.errorCode = ErrorCode.UNSUPPORTED_ENDPOINT_TYPE;
      res.errorMessage = 'The broker does not support DescribeCluster for the controller endpoint type';
      return res;
    }
    // v2: isFenced; a live broker of the view is never fenced.
    for (const b of ctx.services.cluster.liveBrokers()) {
      const e = endpointFor(b, ctx.connection.listenerName);
      if (e) res.brokers.push(createDescribeClusterResponseDescribeClusterBroker({ brokerId: b.nodeId, host: e.host, port: e.port, rack: b.rack, isFenced: false }));
    }
    return res;
  },
});
