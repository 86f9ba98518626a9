/**
 * Consumer group offsets follow their mirror topics (and, translated by offset-map.ts, their active-active topics): the offsets a group commits on the link's cluster for a
 * mirrored topic are committed here, for the mirror topic, unchanged, since a mirror keeps the source's offsets
 * (Cluster Linking's consumer offset sync; MirrorMaker 2 has to translate them). A consumer that moves to this
 * cluster after a promotion resumes where it stopped there: nothing read twice, nothing skipped.
 *
 * Each broker syncs the groups it coordinates here (the coordinator commits them itself, with Kafka's "simple"
 * commit: generation -1, no member id). Rules, as MirrorMaker 2's sync.group.offsets:
 *   - a group with members here is left alone: its consumers commit for themselves (Kafka refuses a simple
 *     commit to a group with members anyway);
 *   - an offset past what the mirror holds is lowered to its high watermark, so a consumer that fails over
 *     never starts past data that has not arrived (it re-reads at most what had not been copied);
 *   - an offset equal to the one committed here is not written again;
 *   - a translated offset (active-active) only moves a group forward (SyncTarget).
 */
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { OffsetCommitRequestTopic } from '../../protocol/messages/008-offset-commit.gen.js';
import type { KafkaAdmin } from '../client/admin.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import type { Logger } from '../observability/logger.js';
import { groupSelected, type ClusterLink, type MirrorTopic } from './model.js';

/** OffsetCommit v8: topics by name, flexible; what the coordinator is asked with. */
const COMMIT_VERSION = 8;
/** DescribeGroups v5: the version the coordinator describes with. */
const DESCRIBE_VERSION = 5;
/** Groups asked for in one OffsetFetch pass, so one link with many groups does not make one huge request. */
const GROUPS_PER_PASS = 500;

export interface GroupSyncDeps {
  /** Whether this broker coordinates the group. */
  coordinates(groupId: string): boolean;
  readonly groups: Pick<GroupCoordinator, 'commitOffsets' | 'fetchOffsets' | 'describeGroups'>;
  /** The mirror partition's high watermark here, null when unknown. */
  highWatermark(topic: string, partition: number): Promise<number | null>;
  readonly log: Logger;
}

/**
 * Where a commit on the link's cluster lands here. A translated commit only ever moves a group forward, as
 * MirrorMaker 2's checkpoint sync does (MirrorCheckpointTask: a downstream offset at or past the translated one is
 * left alone): in a mesh the same group arrives from every link, and from a cluster that had itself translated it,
 * a second time more conservatively; the furthest of these safe answers is the one kept.
 */
interface SyncTarget {
  readonly topic: string;
  readonly offset: bigint;
  readonly forwardOnly: boolean;
}

/** Active-active topics of the link: their group offsets are translated (offset-map.ts), not copied. */
export interface ActiveTopicsSync {
  readonly topics: ReadonlySet<string>;
  /** The offset here for a commit at `offset` on the link's cluster; null when it cannot be told. */
  translate(topic: string, partition: number, offset: number): Promise<number | null>;
}

export interface GroupSyncResult {
  readonly groups: number;
  readonly committed: number;
}

export class GroupSync {
  private readonly warned = new Set<string>();

  constructor(private readonly deps: GroupSyncDeps) {}

  /**
   * One pass: the link's selected groups this broker coordinates, for the topics `mirrors` mirror (offsets as they
   * are) and the link's active-active topics (offsets translated).
   */
  async sync(admin: KafkaAdmin, link: ClusterLink, mirrors: readonly MirrorTopic[], active?: ActiveTopicsSync): Promise<GroupSyncResult> {
    const bySource = new Map<string, MirrorTopic[]>();
    for (const m of mirrors) bySource.set(m.sourceTopic, [...(bySource.get(m.sourceTopic) ?? []), m]);
    if (bySource.size === 0 && (active?.topics.size ?? 0) === 0) return { groups: 0, committed: 0 };
    // Where a commit on the link's cluster lands here: the mirrors of its topic at the same offset (lowered to what
    // they hold), or the active-active topic of the same name at the translated offset.
    const targets = async (topic: string, partition: number, offset: bigint): Promise<SyncTarget[]> => {
      const out: SyncTarget[] = [];
      for (const m of bySource.get(topic) ?? []) {
        const hw = await this.deps.highWatermark(m.topic, partition);
        if (hw !== null) out.push({ topic: m.topic, offset: offset > BigInt(hw) ? BigInt(hw) : offset, forwardOnly: false });
      }
      if (active?.topics.has(topic)) {
        const translated = await active.translate(topic, partition, Number(offset));
        if (translated !== null) out.push({ topic, offset: BigInt(translated), forwardOnly: true });
      }
      return out;
    };
    const ids = (await admin.listGroups()).map((g) => g.groupId).filter((g) => groupSelected(link.groupFilters, g) && this.deps.coordinates(g));
    let groups = 0;
    let committed = 0;
    for (let i = 0; i < ids.length; i += GROUPS_PER_PASS) {
      const fetched = await admin.fetchGroupOffsets(ids.slice(i, i + GROUPS_PER_PASS));
      for (const [groupId, result] of fetched) {
        if (result.errorCode !== ErrorCode.NONE) continue;
        const wanted = result.offsets.filter((o) => o.errorCode === ErrorCode.NONE && o.offset >= 0n && (bySource.has(o.topic) || active?.topics.has(o.topic)));
        if (wanted.length === 0) continue;
        groups++;
        committed += await this.syncGroup(groupId, wanted, targets);
      }
    }
    return { groups, committed };
  }

  private async syncGroup(
    groupId: string,
    offsets: readonly { topic: string; partition: number; offset: bigint; metadata: string | null }[],
    targets: (topic: string, partition: number, offset: bigint) => Promise<SyncTarget[]>,
  ): Promise<number> {
    const [described] = await this.deps.groups.describeGroups([groupId], DESCRIBE_VERSION);
    if (described && described.errorCode === ErrorCode.NONE && described.members.length > 0) return 0;
    const local = await this.deps.groups.fetchOffsets({ groupId, memberId: null, memberEpoch: -1, topics: null });
    const current = new Map<string, bigint>();
    for (const t of local.topics) for (const p of t.partitions) current.set(`${t.name}\0${p.partitionIndex}`, p.committedOffset);
    const topics = new Map<string, OffsetCommitRequestTopic>();
    for (const o of offsets) {
      for (const { topic, offset, forwardOnly } of await targets(o.topic, o.partition, o.offset)) {
        const now = current.get(`${topic}\0${o.partition}`);
        if (now === offset || (forwardOnly && now !== undefined && now >= offset)) continue;
        let t = topics.get(topic);
        if (!t) topics.set(topic, (t = { name: topic, topicId: ZERO_UUID, partitions: [] }));
        t.partitions.push({ partitionIndex: o.partition, committedOffset: offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: o.metadata });
      }
    }
    if (topics.size === 0) return 0;
    const res = await this.deps.groups.commitOffsets(
      { groupId, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null, retentionTimeMs: -1n, topics: [...topics.values()] },
      COMMIT_VERSION,
    );
    let n = 0;
    for (const t of res.topics) {
      for (const p of t.partitions) {
        if (p.errorCode === ErrorCode.NONE) {
          n++;
          continue;
        }
        const key = `${groupId}\0${p.errorCode}`;
        if (this.warned.has(key)) continue;
        if (this.warned.size > 10_000) this.warned.clear();
        this.warned.add(key);
        this.deps.log.warn({ group: groupId, topic: t.name, partition: p.partitionIndex, error: errorByCode(p.errorCode).name }, 'a mirrored group offset was not committed');
      }
    }
    return n;
  }
}
