/**
 * Small fakes of the services API handlers use (src/api/services.ts), and a request context over them, so
 * a handler is tested in-process against exactly the services it names in `uses`.
 */
import type { RequestContext } from '../../../src/api/handler.js';
import { ANONYMOUS, type NodeService, type ServiceName, type Services } from '../../../src/api/services.js';
import { coordinatorPartition, type ClusterView, type LiveBroker } from '../../../src/cluster/cluster-view.js';

export interface ContextOptions {
  readonly apiVersion: number;
  readonly apiKey?: number;
  readonly clientId?: string;
  readonly listenerName?: string;
  readonly signal?: AbortSignal;
  /** Collects what the handler refused (ctx.refuse). */
  readonly refusals?: string[];
}

export function requestContext<S extends ServiceName>(services: Pick<Services, S>, o: ContextOptions): RequestContext<S> {
  return {
    services,
    principal: ANONYMOUS,
    header: { requestApiKey: o.apiKey ?? 0, requestApiVersion: o.apiVersion, correlationId: 1, clientId: o.clientId ?? 'cli' },
    apiVersion: o.apiVersion,
    connection: { id: 1, remoteAddress: '10.0.0.5:53122', listenerName: o.listenerName ?? 'PLAINTEXT', clientSoftwareName: null, clientSoftwareVersion: null },
    signal: o.signal ?? new AbortController().signal,
    refuse: (reason) => void o.refusals?.push(reason),
  };
}

/** This node: id 7 at broker.example:9092 on every listener. */
export function fakeNode(o: { nodeId?: number; clusterId?: string; host?: string; port?: number } = {}): NodeService {
  return {
    nodeId: o.nodeId ?? 7,
    clusterId: o.clusterId ?? 'cluster-0',
    advertisedFor: () => ({ host: o.host ?? 'broker.example', port: o.port ?? 9092 }),
  };
}

/**
 * A cluster view over a fixed set of brokers (7 at broker.example:9092 unless told otherwise): `owned` says
 * which partitions node 7 owns (all by default); `ownerOf` which broker owns the others (-1: none).
 */
export function fakeCluster(o: { brokers?: LiveBroker[]; owned?: (topic: string, partition: number) => boolean; ownerOf?: (topic: string, partition: number) => number; coordinatorNode?: number; controllerId?: number } = {}): ClusterView {
  const brokers = o.brokers ?? [{ nodeId: 7, rack: null, endpoints: [{ listenerName: 'PLAINTEXT', host: 'broker.example', port: 9092 }] }];
  const owned = o.owned ?? (() => true);
  const owner = (t: string, p: number): number => (owned(t, p) ? 7 : (o.ownerOf?.(t, p) ?? -1));
  return {
    localNodeId: 7,
    controllerId: o.controllerId ?? 7,
    liveBrokers: () => brokers,
    broker: (id) => brokers.find((b) => b.nodeId === id),
    owner,
    owns: (t, p) => owned(t, p),
    replicas: (t, p) => (owner(t, p) >= 0 ? [owner(t, p)] : []),
    isr: (t, p) => (owner(t, p) >= 0 ? [owner(t, p)] : []),
    coordinator: (type, key) => {
      const topic = type === 'group' ? '__consumer_offsets' : '__transaction_state';
      const partition = coordinatorPartition(key, 50);
      return { topic, partition, nodeId: o.coordinatorNode ?? owner(topic, partition) };
    },
    subscribe: () => () => undefined,
  };
}
