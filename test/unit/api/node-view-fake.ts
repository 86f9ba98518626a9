/** A NodeView (src/api/node-view.ts) over a fixed topic list, for the single-node admin handlers' tests. */
import type { NodeView, TopicView } from '../../../src/api/node-view.js';

export function fakeNodeView(topics: readonly TopicView[], o: { nodeId?: number; opening?: readonly string[] } = {}): NodeView {
  const opening = new Set(o.opening ?? []);
  return {
    nodeId: o.nodeId ?? 1,
    clusterId: 'cluster-0',
    directoryId: 'ZGlyZWN0b3J5LWlkLTAwMA',
    controllerListeners: [{ name: 'PLAINTEXT', host: 'broker.example', port: 9092 }],
    topics: () => topics,
    topic: (name) => topics.find((t) => t.name === name),
    // A partition still opening: no leader yet, as the cluster view reports a partition nobody has taken.
    partition: (topic, p) => {
      const self = [o.nodeId ?? 1];
      return opening.has(`${topic}-${p}`) ? { leaderId: -1, leaderEpoch: -1, replicas: self, isr: [] } : { leaderId: self[0]!, leaderEpoch: 3, replicas: self, isr: self };
    },
  };
}

export function topic(name: string, partitions: number): TopicView {
  return { name, topicId: `id-${name}`.padEnd(22, 'A').slice(0, 22), partitions, internal: name.startsWith('__') };
}
