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
    leaderEpoch: (topic, p) => (opening.has(`${topic}-${p}`) ? undefined : 3),
  };
}

export function topic(name: string, partitions: number): TopicView {
  return { name, topicId: `id-${name}`.padEnd(22, 'A').slice(0, 22), partitions, internal: name.startsWith('__') };
}
