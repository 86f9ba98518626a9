/**
 * Cluster links and mirror topics: what is stored, and the checks every writer applies (links.ts, mirrors.ts).
 *
 * A cluster link names a remote Kafka-protocol cluster (Apache Kafka or Ledgerline) and how to reach it. A mirror
 * topic is a local topic that copies one topic of a link's cluster record for record, at the same offsets; it is
 * read-only until promoted (or failed over), as Confluent Cluster Linking's mirror topics.
 *
 *   link   {"name":"east","bootstrapServers":"10.0.0.1:9092","securityProtocol":"SASL_SSL",
 *           "sasl":{"mechanism":"SCRAM-SHA-512","username":"mirror","password":"..."},"tls":{"ca":"-----BEGIN..."},
 *           "syncGroupOffsets":true,"groupFilters":["*"],"offsetSyncIntervalMs":5000,"metadataSyncIntervalMs":30000}
 *   mirror {"topic":"orders","link":"east","sourceTopic":"orders","state":"mirroring",
 *           "stoppedPartitions":[],"groupsSyncedBy":[],"createdAtMs":...,"stateChangedAtMs":...}
 *
 * Mirror states:
 *
 *   mirroring ──promote──► promoting ──every partition caught up with the source, open transactions aborted,
 *       │                     │         a last group offset sync by every live broker──► promoted
 *       └──failover──► failing-over ◄──failover──┘
 *                         └──every partition stopped where it is, open transactions aborted──► failed-over
 *
 * promoted and failed-over topics are ordinary, writable topics; the record stays to say where they came from.
 */

export const SECURITY_PROTOCOLS = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export type SecurityProtocol = (typeof SECURITY_PROTOCOLS)[number];
export const SASL_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type LinkSaslMechanism = (typeof SASL_MECHANISMS)[number];

export interface ClusterLink {
  readonly name: string;
  /** Kafka's bootstrap.servers: `host:port[,host:port...]`. */
  readonly bootstrapServers: string;
  readonly securityProtocol: SecurityProtocol;
  readonly sasl?: { readonly mechanism: LinkSaslMechanism; readonly username: string; readonly password: string };
  /** PEM of the CA that signs the remote brokers' certificates (absent: the system's CAs). */
  readonly tls?: { readonly ca?: string };
  /** Copy consumer groups' committed offsets of mirrored topics (Cluster Linking's consumer.offset.sync.enable). */
  readonly syncGroupOffsets: boolean;
  /** Group ids to copy: exact names, or patterns ending in `*` (`*` alone: all). */
  readonly groupFilters: readonly string[];
  readonly offsetSyncIntervalMs: number;
  /**
   * Source topics to mirror as they appear: exact names, or prefixes ending in `*` (`ledgerline migrate`); a
   * topic whose name starts with `__` (internal) never is. Empty: mirrors are created one by one.
   */
  readonly autoMirrorTopics: readonly string[];
  /** How often partition counts and topic configs are read from the source. */
  readonly metadataSyncIntervalMs: number;
  readonly createdAtMs: number;
}

export const MIRROR_STATES = ['mirroring', 'promoting', 'failing-over', 'promoted', 'failed-over'] as const;
export type MirrorState = (typeof MIRROR_STATES)[number];

export interface MirrorTopic {
  readonly topic: string;
  readonly link: string;
  readonly sourceTopic: string;
  readonly state: MirrorState;
  /** Partitions whose owner stopped mirroring them (promoting, failing-over). */
  readonly stoppedPartitions: readonly number[];
  /** Brokers that made their last group offset sync for a promotion. */
  readonly groupsSyncedBy: readonly number[];
  readonly createdAtMs: number;
  readonly stateChangedAtMs: number;
}

/**
 * Active-active topics: the topics a name or prefix (`orders*`) selects are written on every cluster of the mesh
 * and copied from the clusters of `links` (one link per other cluster; origin.ts). Stored per cluster:
 *   /replicated-topics/<pattern>   {"pattern":"orders*","links":["east","west"],"createdAtMs":...}
 */
export interface ReplicatedTopics {
  readonly pattern: string;
  readonly links: readonly string[];
  readonly createdAtMs: number;
}

/** Why a replicated-topics record cannot be stored, or null. */
export function invalidReplicatedTopics(r: ReplicatedTopics): string | null {
  if (typeof r.pattern !== 'string' || !/^[a-zA-Z0-9._-]{1,249}\*?$/.test(r.pattern) || r.pattern.startsWith('__')) return `pattern must be a topic name or a prefix ending in *, not internal, got ${JSON.stringify(r.pattern)}`;
  if (!Array.isArray(r.links) || r.links.length === 0 || r.links.length > 64 || r.links.some((l) => typeof l !== 'string' || !NAME.test(l))) return 'links must name 1 to 64 cluster links, one per other cluster';
  if (new Set(r.links).size !== r.links.length) return 'links must not repeat';
  return null;
}

/** Whether a mirror topic's partitions still take records only from the link (Produce refused). */
export function isReadOnly(state: MirrorState): boolean {
  return state === 'mirroring' || state === 'promoting' || state === 'failing-over';
}

export const LINK_DEFAULTS = {
  syncGroupOffsets: true,
  groupFilters: ['*'] as readonly string[],
  autoMirrorTopics: [] as readonly string[],
  offsetSyncIntervalMs: 5_000,
  metadataSyncIntervalMs: 30_000,
};

const NAME = /^[a-zA-Z0-9._-]{1,249}$/;
const HOST_PORT = /^(\[[0-9a-fA-F:.]+\]|[a-zA-Z0-9.-]+):([0-9]{1,5})$/;
/** The largest PEM, password or filter list a link may carry: links are small records. */
const MAX_FIELD = 64 * 1024;

/** Why a link cannot be stored, or null. */
export function invalidLink(l: ClusterLink): string | null {
  if (typeof l.name !== 'string' || !NAME.test(l.name)) return `a link name is 1 to 249 of [a-zA-Z0-9._-], got ${JSON.stringify(l.name)}`;
  if (typeof l.bootstrapServers !== 'string' || l.bootstrapServers.length > 4096) return 'bootstrapServers must be host:port[,host:port...]';
  const servers = l.bootstrapServers.split(',').map((s) => s.trim());
  for (const s of servers) {
    const m = HOST_PORT.exec(s);
    if (!m || Number(m[2]) < 1 || Number(m[2]) > 65535) return `bootstrapServers: ${JSON.stringify(s)} is not host:port`;
  }
  if (!SECURITY_PROTOCOLS.includes(l.securityProtocol)) return `securityProtocol must be one of ${SECURITY_PROTOCOLS.join(', ')}`;
  const saslProtocol = l.securityProtocol === 'SASL_PLAINTEXT' || l.securityProtocol === 'SASL_SSL';
  if (saslProtocol !== (l.sasl !== undefined)) return saslProtocol ? `${l.securityProtocol} needs sasl {mechanism, username, password}` : `sasl is only for SASL_PLAINTEXT and SASL_SSL`;
  if (l.sasl) {
    if (!SASL_MECHANISMS.includes(l.sasl.mechanism)) return `sasl.mechanism must be one of ${SASL_MECHANISMS.join(', ')}`;
    if (typeof l.sasl.username !== 'string' || l.sasl.username === '' || l.sasl.username.length > MAX_FIELD) return 'sasl.username must be a non-empty string';
    if (typeof l.sasl.password !== 'string' || l.sasl.password.length > MAX_FIELD) return 'sasl.password must be a string';
  }
  if (l.tls !== undefined) {
    if (l.securityProtocol !== 'SSL' && l.securityProtocol !== 'SASL_SSL') return 'tls is only for SSL and SASL_SSL';
    if (l.tls.ca !== undefined && (typeof l.tls.ca !== 'string' || !l.tls.ca.includes('-----BEGIN') || l.tls.ca.length > MAX_FIELD)) return 'tls.ca must be a PEM certificate';
  }
  if (typeof l.syncGroupOffsets !== 'boolean') return 'syncGroupOffsets must be true or false';
  if (!Array.isArray(l.groupFilters) || l.groupFilters.length > 1000 || l.groupFilters.some((f) => typeof f !== 'string' || f === '' || f.length > 255)) {
    return 'groupFilters must be a list of at most 1000 group ids or prefixes ending in *';
  }
  if (!Array.isArray(l.autoMirrorTopics) || l.autoMirrorTopics.length > 1000 || l.autoMirrorTopics.some((f) => typeof f !== 'string' || f === '' || f.length > 250)) {
    return 'autoMirrorTopics must be a list of at most 1000 topic names or prefixes ending in *';
  }
  for (const [name, v, min] of [['offsetSyncIntervalMs', l.offsetSyncIntervalMs, 100], ['metadataSyncIntervalMs', l.metadataSyncIntervalMs, 1000]] as const) {
    if (!Number.isSafeInteger(v) || v < min || v > 86_400_000) return `${name} must be an integer from ${min} to 86400000`;
  }
  return null;
}

/** Whether a name passes a list of exact names and prefixes ending in `*` (groupFilters, autoMirrorTopics). */
export function nameSelected(filters: readonly string[], name: string): boolean {
  return filters.some((f) => (f.endsWith('*') ? name.startsWith(f.slice(0, -1)) : f === name));
}

export const groupSelected = nameSelected;

/** The link as the admin API shows it: the SASL password never leaves the broker (as Kafka's sensitive configs). */
export function describeLink(l: ClusterLink): Record<string, unknown> {
  return { ...l, ...(l.sasl ? { sasl: { mechanism: l.sasl.mechanism, username: l.sasl.username, password: null } } : {}) };
}

/** Why a mirror record cannot be stored, or null. */
export function invalidMirror(m: MirrorTopic): string | null {
  if (typeof m.topic !== 'string' || !NAME.test(m.topic)) return `a topic name is 1 to 249 of [a-zA-Z0-9._-], got ${JSON.stringify(m.topic)}`;
  if (typeof m.sourceTopic !== 'string' || !NAME.test(m.sourceTopic)) return `sourceTopic must be a topic name, got ${JSON.stringify(m.sourceTopic)}`;
  if (typeof m.link !== 'string' || !NAME.test(m.link)) return `link must name a cluster link`;
  if (!MIRROR_STATES.includes(m.state)) return `state must be one of ${MIRROR_STATES.join(', ')}`;
  return null;
}

/** The state changes an operator may ask for (the others are the brokers' own). */
export function nextState(from: MirrorState, action: 'promote' | 'failover'): MirrorState | string {
  if (action === 'promote') {
    if (from === 'mirroring' || from === 'promoting') return 'promoting';
    return `a ${from} mirror cannot be promoted${from === 'failing-over' ? ' (it is failing over)' : ''}`;
  }
  if (from === 'mirroring' || from === 'promoting' || from === 'failing-over') return 'failing-over';
  return `a ${from} mirror cannot fail over`;
}
