/**
 * GroupSync (src/replication/group-sync.ts) over an in-memory coordinator and a remote admin: mirrored offsets are
 * copied as they are, down as well as up; translated offsets of active-active topics only move a group forward, so
 * the same group arriving through two links (the second time translated twice) keeps the furthest safe answer.
 */
import { describe, expect, it } from 'vitest';
import type { KafkaAdmin } from '../../../src/client/admin.js';
import { GroupSync, type GroupSyncDeps } from '../../../src/replication/group-sync.js';
import { LINK_DEFAULTS, type ClusterLink, type MirrorTopic } from '../../../src/replication/model.js';

type Committed = Map<string, bigint>;

function coordinator(committed: Committed): GroupSyncDeps['groups'] {
  return {
    describeGroups: async (ids: string[]) => ids.map((groupId) => ({ groupId, errorCode: 0, members: [] })),
    fetchOffsets: async () => {
      const byTopic = new Map<string, { partitionIndex: number; committedOffset: bigint }[]>();
      for (const [k, v] of committed) {
        const [topic, p] = k.split('/');
        byTopic.set(topic!, [...(byTopic.get(topic!) ?? []), { partitionIndex: Number(p), committedOffset: v }]);
      }
      return { topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
    },
    commitOffsets: async (req: { topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint }[] }[] }) => {
      for (const t of req.topics) for (const p of t.partitions) committed.set(`${t.name}/${p.partitionIndex}`, p.committedOffset);
      return { topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: 0 })) })) };
    },
  } as unknown as GroupSyncDeps['groups'];
}

function remote(offsets: Record<string, number>): KafkaAdmin {
  return {
    listGroups: async () => [{ groupId: 'g', protocolType: 'consumer' }],
    fetchGroupOffsets: async () =>
      new Map([
        ['g', { errorCode: 0, offsets: Object.entries(offsets).map(([k, offset]) => ({ topic: k.split('/')[0]!, partition: Number(k.split('/')[1]), offset: BigInt(offset), leaderEpoch: -1, metadata: null, errorCode: 0 })) }],
      ]),
  } as unknown as KafkaAdmin;
}

const link = { name: 'l', bootstrapServers: 'x:1', ...LINK_DEFAULTS } as unknown as ClusterLink;

function sync(committed: Committed): GroupSync {
  const log = { warn: () => undefined, info: () => undefined } as unknown as GroupSyncDeps['log'];
  return new GroupSync({ coordinates: () => true, groups: coordinator(committed), highWatermark: async () => 1000, log });
}

describe('GroupSync', () => {
  it('copies a mirrored offset as it is, backwards too (a reset on the source follows)', async () => {
    const committed: Committed = new Map();
    const mirrors = [{ topic: 'm', sourceTopic: 'm', link: 'l' }] as unknown as MirrorTopic[];
    await sync(committed).sync(remote({ 'm/0': 500 }), link, mirrors);
    expect(committed.get('m/0')).toBe(500n);
    await sync(committed).sync(remote({ 'm/0': 200 }), link, mirrors);
    expect(committed.get('m/0')).toBe(200n);
  });

  it('moves a translated offset forward only, whichever link brings it', async () => {
    const committed: Committed = new Map();
    const s = sync(committed);
    const active = (shift: number) => ({ topics: new Set(['aa']), translate: async (_t: string, _p: number, o: number) => o - shift });
    // Through link A: exact; through link C, which had translated it itself: further back.
    await s.sync(remote({ 'aa/0': 250 }), link, [], active(10));
    expect(committed.get('aa/0')).toBe(240n);
    expect(await s.sync(remote({ 'aa/0': 250 }), link, [], active(30))).toEqual({ groups: 1, committed: 0 });
    expect(committed.get('aa/0')).toBe(240n);
    // The group goes on: forward from either.
    await s.sync(remote({ 'aa/0': 300 }), link, [], active(30));
    expect(committed.get('aa/0')).toBe(270n);
    // A commit that cannot be translated changes nothing.
    await s.sync(remote({ 'aa/0': 400 }), link, [], { topics: new Set(['aa']), translate: async () => null });
    expect(committed.get('aa/0')).toBe(270n);
  });
});
