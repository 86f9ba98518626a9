/**
 * Active-active topics (Pulsar's geo-replication, on Kafka's protocol): every cluster of the mesh takes writes,
 * and each copies from every other one the records that were written there (origin.ts). One ActiveReplicator per
 * link and broker copies, for the topics the replicated-topics selections give that link, the partitions this
 * broker leads:
 *
 *   remote partition ──Fetch read_committed from the cursor──► committed batches (aborted ones dropped)
 *     ──records with no origin header (written there), tagged origin=<remote cluster id>, offset=<offset there>──►
 *   log.append here (a new batch; its offsets are this log's) ──► cursor = after the last batch fetched
 *
 * The cursor is durable with the data: each copied record names its offset on the origin cluster, so after a
 * crash or a move the cursor is the highest origin offset from that cluster in this log, plus one. To bound that
 * search a checkpoint {originCluster, originOffset, localOffset} is written to the metadata store every few
 * seconds (`/replication-cursors/<topic>/<partition>/<link>`): the search reads this log from `localOffset` on.
 * The partitions must be the same in number on every cluster; a partition the remote lacks waits.
 */
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { splitRecordBatches } from '../../protocol/records/split.js';
import type { FetchResult, KafkaClient } from '../client/client.js';
import { OffsetSpec } from '../client/client.js';
import { MetadataError } from '../client/errors.js';
import type { PartitionLog } from '../log/index.js';
import { segment } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
import type { ClusterLink } from './model.js';
import { committedBatches, lastOriginOffsetIn, tagLocalRecords } from './origin.js';
import { ReplicatorLoop } from './replicator-loop.js';
import type { ActiveOffsetMap } from './offset-map.js';
import type { PartitionStatus } from './link-replicator.js';

export const CURSORS_PREFIX = '/replication-cursors/';

export interface ActiveReplicatorDeps {
  /** Where what is copied is sampled, to translate consumer group offsets (offset-map.ts). */
  readonly offsets: ActiveOffsetMap;
  owns(topic: string, partition: number): boolean;
  openLog(topic: string, partition: number): Promise<PartitionLog | undefined>;
  /** Local topics with their partition counts. */
  topics(): readonly { readonly name: string; readonly partitions: number }[];
  /** The links the topic is copied from (replicated-topics selections); empty for none. */
  linksFor(topic: string): readonly string[];
  /** Mirror topics are copied by their link alone. */
  isMirror(topic: string): boolean;
  readonly store: MetadataStore;
  connect(link: ClusterLink): Promise<KafkaClient>;
  readonly log: Logger;
}

interface Checkpoint {
  readonly formatVersion: 1;
  readonly originCluster: string;
  /** Every record of the origin before this offset is in the local log before `localOffset`. */
  readonly originOffset: number;
  readonly localOffset: number;
}

interface Task {
  readonly topic: string;
  readonly partition: number;
  readonly log: PartitionLog;
  readonly status: PartitionStatus;
}

interface Cursor {
  originCluster: string;
  /** The highest origin offset per cluster among the copies the remote's log held before `next`, as far as read here. */
  readonly remoteCopies: Map<string, number>;
  next: number;
  checkpointed: number;
  checkpointedAtMs: number;
}

const FETCH_MAX_WAIT_MS = 500;
const PARTITION_MAX_BYTES = 1024 * 1024;
const FETCH_MAX_BYTES = 50 * 1024 * 1024;
const CHECKPOINT_EVERY_MS = 5_000;
/** Bytes read per step when the cursor is recovered from the log. */
const SCAN_BYTES = 8 * 1024 * 1024;
const MISSING_RETRY_MS = 30_000;

export class ActiveReplicator extends ReplicatorLoop {
  readonly status = new Map<string, PartitionStatus>();
  private readonly cursors = new Map<string, Cursor>();
  private readonly missing = new Map<string, number>();
  /** The link's cluster's id (its Metadata's cluster_id), once known. */
  remoteCluster: string | null = null;

  constructor(
    link: ClusterLink,
    private readonly deps: ActiveReplicatorDeps,
  ) {
    super(link, deps.connect, deps.log, 'active-active replication from the cluster link');
  }

  private async tasks(): Promise<Task[]> {
    const out: Task[] = [];
    const seen = new Set<string>();
    const wanted: { topic: string; partition: number; key: string }[] = [];
    for (const t of this.deps.topics()) {
      if (this.deps.isMirror(t.name) || !this.deps.linksFor(t.name).includes(this.link.name)) continue;
      for (let p = 0; p < t.partitions; p++) {
        if (!this.deps.owns(t.name, p)) continue;
        const key = `${t.name}\0${p}`;
        seen.add(key);
        const missingAt = this.missing.get(key);
        if (missingAt !== undefined && Date.now() - missingAt < MISSING_RETRY_MS) continue;
        wanted.push({ topic: t.name, partition: p, key });
      }
    }
    // Opened together, not one after another (link-replicator.ts measures why).
    const logs = await Promise.all(wanted.map((w) => this.deps.openLog(w.topic, w.partition)));
    wanted.forEach(({ topic, partition, key }, i) => {
      const log = logs[i];
      if (!log) return;
      let status = this.status.get(key);
      if (!status) this.status.set(key, (status = { topic, partition, link: this.link.name, sourceTopic: topic, position: 0, sourceHighWatermark: -1, lastFetchMs: 0, copiedRecords: 0, copiedBytes: 0, error: null }));
      out.push({ topic, partition, log, status });
    });
    for (const key of [...this.status.keys()]) {
      if (seen.has(key)) continue;
      this.status.delete(key);
      this.cursors.delete(key);
      this.missing.delete(key);

    }
    return out;
  }

  protected async round(): Promise<boolean> {
    const tasks = await this.tasks();
    if (tasks.length === 0) return false;
    const client = await this.connected();
    if (this.remoteCluster === null) {
      const md = await client.metadata([]);
      if (!md.clusterId) throw new Error(`the cluster of link ${this.link.name} has no cluster id`);
      this.remoteCluster = md.clusterId;
    }
    const origin = this.remoteCluster;
    for (const t of tasks) if (!this.cursors.has(keyOf(t))) this.cursors.set(keyOf(t), await this.recoverCursor(t, origin));
    let results: FetchResult[];
    try {
      results = await client.fetch(
        tasks.map((t) => ({ topic: t.topic, partition: t.partition, offset: BigInt(this.cursors.get(keyOf(t))!.next), maxBytes: PARTITION_MAX_BYTES })),
        { maxWaitMs: FETCH_MAX_WAIT_MS, minBytes: 1, maxBytes: FETCH_MAX_BYTES, isolationLevel: 1 },
      );
    } catch (err) {
      if (err instanceof MetadataError && (await this.setAsideMissing(client, tasks))) return true;
      throw err;
    }
    await Promise.all(tasks.map((t, i) => this.apply(client, t, results[i]!, origin)));
    return true;
  }

  private async apply(client: KafkaClient, t: Task, r: FetchResult, origin: string): Promise<void> {
    const cursor = this.cursors.get(keyOf(t))!;
    t.status.lastFetchMs = Date.now();
    if (r.errorCode === ErrorCode.OFFSET_OUT_OF_RANGE) {
      const [earliest] = await client.listOffsets([{ topic: t.topic, partition: t.partition, timestamp: OffsetSpec.EARLIEST }]);
      if (earliest && earliest.errorCode === ErrorCode.NONE && Number(earliest.offset) > cursor.next) {
        this.deps.log.warn({ link: this.link.name, topic: t.topic, partition: t.partition, from: cursor.next, to: Number(earliest.offset) }, 'the remote cluster deleted records before they were copied (retention); copying continues from its log start offset');
        cursor.next = Number(earliest.offset);
      } else {
        t.status.error = 'the remote answers OFFSET_OUT_OF_RANGE past its log start offset';
      }
      return;
    }
    if (r.errorCode !== ErrorCode.NONE) {
      t.status.error = `the remote answers ${errorByCode(r.errorCode).name}`;
      return;
    }
    t.status.error = null;
    // Read committed: the fetch stops at the last stable offset, the lag counts to it.
    t.status.sourceHighWatermark = Number(r.lastStableOffset);
    if (r.records && r.records.length > 0) {
      let next = cursor.next;
      for (const b of splitRecordBatches(r.records, { allowPartialTail: true })) next = Math.max(next, b.lastOffsetNumber + 1);
      const appends: Promise<unknown>[] = [];
      for (const b of committedBatches(r.records, r.abortedTransactions)) {
        if (b.lastOffsetNumber < cursor.next) continue;
        b.validate();
        const tagged = await tagLocalRecords(b, origin, cursor.next);
        for (const [c, o] of tagged.copiedOrigins) if (o > (cursor.remoteCopies.get(c) ?? -1)) cursor.remoteCopies.set(c, o);
        // A sample per batch: a group committed at its end on the remote is translated exactly, and within a
        // batch of copies too, through the run's origin offsets (offset-map.ts).
        this.deps.offsets.recordSeen(t.topic, t.partition, origin, b.lastOffsetNumber + 1, cursor.remoteCopies, tagged.copyRun);
        if (!tagged.batch) continue;
        const { firstOriginOffset, lastOriginOffset, records } = tagged;
        appends.push(t.log.append(tagged.batch).then((res) => this.deps.offsets.recordPlacement(t.topic, t.partition, origin, firstOriginOffset, lastOriginOffset, res.baseOffset, records)));
        t.status.copiedRecords += tagged.records;
        t.status.copiedBytes += tagged.batch.length;
      }
      await Promise.all(appends);
      cursor.next = next;
      this.deps.offsets.recordSeen(t.topic, t.partition, origin, next, cursor.remoteCopies);
    }
    t.status.position = cursor.next;
    await this.checkpoint(t, cursor);
  }

  /** The cursor of a partition taken (a start, a move): the checkpoint, then the log from its local offset on. */
  private async recoverCursor(t: Task, origin: string): Promise<Cursor> {
    const kv = await this.deps.store.get(this.checkpointKey(t));
    let cp: Checkpoint | null = null;
    try {
      cp = kv ? (JSON.parse(kv.value.toString('utf8')) as Checkpoint) : null;
    } catch {
      cp = null;
    }
    if (cp && (cp.formatVersion !== 1 || cp.originCluster !== origin)) {
      if (cp.originCluster !== origin) this.deps.log.warn({ link: this.link.name, topic: t.topic, partition: t.partition, was: cp.originCluster, now: origin }, 'the link now reaches another cluster; its records are copied from its start');
      cp = null;
    }
    let from = Math.max(cp?.localOffset ?? 0, t.log.logStartOffset);
    let last = -1;
    while (from < t.log.highWatermark) {
      const read = await t.log.read(from, { maxBytes: SCAN_BYTES });
      if (read.records.length === 0) break;
      const batches = read.records.flatMap((buf) => splitRecordBatches(buf, { allowPartialTail: true }));
      last = Math.max(last, await lastOriginOffsetIn(batches, origin));
      if (read.nextOffset <= from) break;
      from = read.nextOffset;
    }
    const next = Math.max(cp?.originOffset ?? 0, last + 1);
    this.deps.log.info({ link: this.link.name, topic: t.topic, partition: t.partition, originCluster: origin, next }, 'active-active copy resumes');
    return { originCluster: origin, next, remoteCopies: new Map(), checkpointed: cp?.originOffset ?? -1, checkpointedAtMs: Date.now() };
  }

  private async checkpoint(t: Task, cursor: Cursor): Promise<void> {
    if (cursor.next === cursor.checkpointed || Date.now() - cursor.checkpointedAtMs < CHECKPOINT_EVERY_MS) return;
    const cp: Checkpoint = { formatVersion: 1, originCluster: cursor.originCluster, originOffset: cursor.next, localOffset: t.log.logEndOffset };
    await this.deps.store.put(this.checkpointKey(t), Buffer.from(JSON.stringify(cp)));
    cursor.checkpointed = cursor.next;
    cursor.checkpointedAtMs = Date.now();
  }

  private checkpointKey(t: Task): string {
    return `${CURSORS_PREFIX}${segment(t.topic)}/${t.partition}/${segment(this.link.name)}`;
  }

  /** Partitions whose topic or partition the remote lacks wait, with the reason; false when none does. */
  private async setAsideMissing(client: KafkaClient, tasks: readonly Task[]): Promise<boolean> {
    const md = await client.metadata([...new Set(tasks.map((t) => t.topic))]);
    let any = false;
    for (const t of tasks) {
      const topic = md.topics.find((x) => x.name === t.topic);
      const why = !topic || topic.errorCode !== ErrorCode.NONE ? `the remote cluster has no topic ${t.topic}` : t.partition >= topic.partitions.length ? `the remote topic ${t.topic} has no partition ${t.partition}` : null;
      if (why === null) continue;
      any = true;
      if (t.status.error !== why) this.deps.log.warn({ link: this.link.name, topic: t.topic, partition: t.partition }, `active-active copy waits: ${why}`);
      t.status.error = why;
      this.missing.set(keyOf(t), Date.now());
    }
    return any;
  }
}

function keyOf(t: Task): string {
  return `${t.topic}\0${t.partition}`;
}
