/**
 * Mirror topics follow their source topic's shape: its partition count (grown here when the source grows) and
 * its topic config overrides (Kafka's DYNAMIC_TOPIC_CONFIG entries: retention.ms, cleanup.policy,
 * message.timestamp.type, ...), as Cluster Linking syncs a mirror's configs. Ledgerline's own configs
 * (`ledgerline.*`) stay local. Run, for each mirror topic, by the broker that owns its partition 0, every
 * `metadataSyncIntervalMs` of the link; a config the source sets that this broker does not know is skipped and
 * logged once.
 */
import type { KafkaAdmin } from '../client/admin.js';
import type { KafkaClient } from '../client/client.js';
import { TOPIC_CONFIG_BY_NAME } from '../cluster/config-defs.js';
import type { TopicRecord } from '../cluster/topics.js';
import type { Logger } from '../observability/logger.js';
import type { MirrorTopic } from './model.js';

/** Kafka's ConfigSource.DYNAMIC_TOPIC_CONFIG. */
const DYNAMIC_TOPIC_CONFIG = 1;

export interface TopicSyncDeps {
  getTopic(name: string): TopicRecord | undefined;
  addPartitions(name: string, count: number): Promise<unknown>;
  setConfigs(name: string, configs: Record<string, string>): Promise<unknown>;
  readonly log: Logger;
}

export class TopicSync {
  private readonly unknownLogged = new Set<string>();

  constructor(private readonly deps: TopicSyncDeps) {}

  /** One pass over `mirrors` (the ones this broker syncs). */
  async sync(client: KafkaClient, admin: KafkaAdmin, mirrors: readonly MirrorTopic[]): Promise<void> {
    if (mirrors.length === 0) return;
    const sources = [...new Set(mirrors.map((m) => m.sourceTopic))];
    const metadata = await client.metadata(sources);
    const configs = await admin.describeTopicConfigs(sources);
    for (const m of mirrors) {
      const local = this.deps.getTopic(m.topic);
      if (!local) continue;
      const source = metadata.topics.find((t) => t.name === m.sourceTopic);
      if (source && source.errorCode === 0 && source.partitions.length > local.partitions) {
        this.deps.log.info({ topic: m.topic, from: local.partitions, to: source.partitions.length }, 'mirror topic grows with its source topic');
        await this.deps.addPartitions(m.topic, source.partitions.length);
      }
      const c = configs.get(m.sourceTopic);
      if (!c || c.errorCode !== 0) continue;
      const wanted = this.overridesFrom(m.topic, c.configs);
      const current = this.deps.getTopic(m.topic) ?? local;
      const next: Record<string, string> = {};
      for (const [k, v] of Object.entries(current.configs)) if (k.startsWith('ledgerline.')) next[k] = v;
      Object.assign(next, wanted);
      if (!sameConfigs(current.configs, next)) {
        this.deps.log.info({ topic: m.topic, configs: next }, 'mirror topic configs follow its source topic');
        await this.deps.setConfigs(m.topic, next);
      }
    }
  }

  /** The topic config overrides of a source topic's DescribeConfigs entries that a mirror topic `topic` copies. */
  overridesFrom(topic: string, entries: readonly { name: string; value: string | null; source: number; isSensitive: boolean }[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const e of entries) {
      if (e.source !== DYNAMIC_TOPIC_CONFIG || e.isSensitive || e.value === null || e.name.startsWith('ledgerline.')) continue;
      if (!TOPIC_CONFIG_BY_NAME.has(e.name)) {
        const key = `${topic}\0${e.name}`;
        if (!this.unknownLogged.has(key)) {
          this.unknownLogged.add(key);
          this.deps.log.warn({ topic, config: e.name }, 'the source topic sets a config this broker does not know; the mirror topic does not copy it');
        }
        continue;
      }
      out[e.name] = e.value;
    }
    return out;
  }
}

function sameConfigs(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
