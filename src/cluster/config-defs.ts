/**
 * Configuration definitions with Kafka's names, types and defaults: the broker configs Ledgerline reads
 * and the topic-level configs (Kafka's `TopicConfig`/`LogConfig`), each topic config tied to the broker
 * config that supplies its default (Kafka's "synonyms"). DescribeConfigs, CreateTopics and the
 * Alter*Configs APIs validate and describe against these tables.
 *
 * Reference: Kafka 4.x `ServerLogConfigs`, `ServerConfigs`, `SocketServerConfigs`, `TopicConfig`,
 * `LogConfig.configDef`.
 */
import { GROUP_COORDINATOR_CONFIG_DEFS } from '../coordinator/config-defs.js';
import { TRANSACTION_COORDINATOR_CONFIG_DEFS } from '../coordinator/txn/config-defs.js';
import { quoted } from './topic-names.js';

/** Kafka's `ConfigDef.Type`, numbered as DescribeConfigs v3+ reports it (`DescribeConfigsResponse.ConfigType`). */
export const ConfigType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;
export type ConfigTypeName = keyof typeof ConfigType;

/** Kafka's `DescribeConfigsResponse.ConfigSource` (protocol/config-source.ts). */
export { ConfigSource } from '../../protocol/config-source.js';

export const LONG_MAX = '9223372036854775807';

export interface ConfigDef {
  readonly name: string;
  readonly type: ConfigTypeName;
  /** Default as Kafka prints it; null for "no default" (e.g. advertised.listeners). */
  readonly default: string | null;
  readonly doc: string;
  /** Allowed values (case-sensitive, as Kafka's ValidString/ValidList). */
  readonly oneOf?: readonly string[];
  /** Inclusive numeric bounds (Kafka's Range validator). */
  readonly min?: number;
  readonly max?: number;
  readonly sensitive?: boolean;
  readonly readOnly?: boolean;
}

/** A broker config that supplies a topic config's default; `factor` converts its unit (hours → ms). */
export interface BrokerSynonym {
  readonly name: string;
  readonly factor?: number;
}

export interface TopicConfigDef extends ConfigDef {
  /**
   * The broker configs that supply the topic default, most specific first (Kafka's
   * ServerTopicConfigSynonyms: retention.ms ← log.retention.ms, log.retention.minutes, log.retention.hours).
   */
  readonly brokerSynonyms?: readonly BrokerSynonym[];
}

const COMPRESSION = ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'];

/** Broker configs Ledgerline understands. Names and defaults are Kafka's. */
export const BROKER_CONFIGS: readonly ConfigDef[] = [
  { name: 'node.id', type: 'INT', default: '1', doc: 'The node id of this broker.', readOnly: true },
  { name: 'broker.id', type: 'INT', default: '-1', doc: 'Alias of node.id (Kafka kept it for ZooKeeper-era configs).', readOnly: true },
  { name: 'listeners', type: 'LIST', default: 'PLAINTEXT://127.0.0.1:9092', doc: 'Comma-separated URIs to listen on.', readOnly: true },
  { name: 'advertised.listeners', type: 'LIST', default: null, doc: 'Listeners published to clients in Metadata, if different from listeners.', readOnly: true },
  { name: 'controller.listener.names', type: 'LIST', default: null, doc: 'Listeners (names from listeners) that serve the controller APIs, as a KRaft controller does: the endpoints of this node as its quorum\'s voter. Never advertised to clients in Metadata.', readOnly: true },
  // Listener security (src/security/): Kafka's SocketServerConfigs, BrokerSecurityConfigs and SslConfigs names
  // and defaults. A listener-scoped `listener.name.<listener>.<name>` overrides each (listener-security.ts).
  { name: 'listener.security.protocol.map', type: 'STRING', default: 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL', doc: 'The security protocol of each listener name.', readOnly: true },
  { name: 'sasl.enabled.mechanisms', type: 'LIST', default: 'GSSAPI', doc: 'The SASL mechanisms a SASL listener offers: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 (GSSAPI, Kafka\'s default, is not offered: a SASL listener must name others).', readOnly: true },
  { name: 'sasl.server.max.receive.size', type: 'INT', default: '524288', doc: 'The largest frame read from a client before its SASL authentication completes.', min: 1, readOnly: true },
  { name: 'connection.failed.authentication.delay.ms', type: 'INT', default: '100', doc: 'How long the answer to a failed authentication, and the close after it, are delayed.', min: 0, readOnly: true },
  { name: 'connections.max.reauth.ms', type: 'LONG', default: '0', doc: 'KIP-368: the longest SASL session before the client must re-authenticate (0: no limit but the credential\'s own); per mechanism as listener.name.<listener>.<mechanism>.connections.max.reauth.ms.', readOnly: true },
  // Authorization (src/security/acl/): Kafka's AuthorizerConfigs and StandardAuthorizer names and defaults.
  { name: 'authorizer.class.name', type: 'STRING', default: '', oneOf: ['', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer'], doc: 'The authorizer: org.apache.kafka.metadata.authorizer.StandardAuthorizer (Kafka\'s ACL authorizer, whose semantics Ledgerline\'s follows) or empty for none.', readOnly: true },
  { name: 'super.users', type: 'STRING', default: null, doc: 'Principals allowed everything whatever the ACLs say, semicolon-separated: User:admin;User:broker.', readOnly: true },
  { name: 'allow.everyone.if.no.acl.found', type: 'BOOLEAN', default: 'false', doc: 'Whether a resource no ACL names is open to every principal.', readOnly: true },
  // Client quotas (src/quota/): Kafka's QuotaConfig names and defaults; the quota values live in the metadata store.
  { name: 'quota.window.num', type: 'INT', default: '11', doc: 'The number of samples to retain in memory for client quotas.', min: 1, readOnly: true },
  { name: 'quota.window.size.seconds', type: 'INT', default: '1', doc: 'The time span of each sample for client quotas.', min: 1, readOnly: true },
  { name: 'sasl.oauthbearer.jwks.endpoint.url', type: 'STRING', default: null, doc: 'The JWKS whose keys OAUTHBEARER tokens are checked against: file: or https:.', readOnly: true },
  { name: 'sasl.oauthbearer.jwks.endpoint.refresh.ms', type: 'LONG', default: '3600000', doc: 'How often an https: JWKS is fetched again.', readOnly: true },
  { name: 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms', type: 'LONG', default: '100', doc: 'The first wait after a failed JWKS fetch, then doubled.', readOnly: true },
  { name: 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms', type: 'LONG', default: '10000', doc: 'The longest wait between JWKS fetch attempts.', readOnly: true },
  { name: 'sasl.oauthbearer.clock.skew.seconds', type: 'INT', default: '30', doc: 'Leeway for a token\'s exp and nbf.', readOnly: true },
  { name: 'sasl.oauthbearer.expected.audience', type: 'LIST', default: null, doc: 'Audiences of which a token\'s aud must name one.', readOnly: true },
  { name: 'sasl.oauthbearer.expected.issuer', type: 'STRING', default: null, doc: 'The issuer a token\'s iss must name.', readOnly: true },
  { name: 'sasl.oauthbearer.sub.claim.name', type: 'STRING', default: 'sub', doc: 'The claim that names a token\'s principal.', readOnly: true },
  { name: 'sasl.oauthbearer.scope.claim.name', type: 'STRING', default: 'scope', doc: 'The claim that lists a token\'s scope.', readOnly: true },
  { name: 'ssl.keystore.type', type: 'STRING', default: 'JKS', doc: 'PEM or PKCS12 (Node.js reads no JKS: convert it).', readOnly: true },
  { name: 'ssl.keystore.location', type: 'STRING', default: null, doc: 'The key store file: PEM (private key and certificate chain) or PKCS12.', readOnly: true },
  { name: 'ssl.keystore.password', type: 'PASSWORD', default: null, doc: 'The PKCS12 key store password.', sensitive: true, readOnly: true },
  { name: 'ssl.key.password', type: 'PASSWORD', default: null, doc: 'The password of an encrypted private key.', sensitive: true, readOnly: true },
  { name: 'ssl.keystore.certificate.chain', type: 'PASSWORD', default: null, doc: 'The certificate chain as PEM text (KIP-651), with ssl.keystore.key.', sensitive: true, readOnly: true },
  { name: 'ssl.keystore.key', type: 'PASSWORD', default: null, doc: 'The private key as PEM text (KIP-651).', sensitive: true, readOnly: true },
  { name: 'ssl.truststore.type', type: 'STRING', default: 'JKS', doc: 'PEM (PKCS12 and JKS trust stores cannot be read by Node.js).', readOnly: true },
  { name: 'ssl.truststore.location', type: 'STRING', default: null, doc: 'The trust store file (PEM certificates) that client certificates are verified against.', readOnly: true },
  { name: 'ssl.truststore.password', type: 'PASSWORD', default: null, doc: 'Unused for PEM trust stores.', sensitive: true, readOnly: true },
  { name: 'ssl.truststore.certificates', type: 'PASSWORD', default: null, doc: 'Trusted certificates as PEM text (KIP-651).', sensitive: true, readOnly: true },
  { name: 'ssl.client.auth', type: 'STRING', default: 'none', oneOf: ['required', 'requested', 'none'], doc: 'Whether TLS clients must (required) or may (requested) present a certificate.', readOnly: true },
  { name: 'ssl.enabled.protocols', type: 'LIST', default: 'TLSv1.2,TLSv1.3', doc: 'The TLS versions accepted.', readOnly: true },
  { name: 'ssl.protocol', type: 'STRING', default: 'TLSv1.3', doc: 'The SSLContext protocol name; checked, but on a server only ssl.enabled.protocols limits the versions (as with Java\'s TLS).', readOnly: true },
  { name: 'ssl.allow.dn.changes', type: 'BOOLEAN', default: 'false', doc: 'Whether a reloaded key store may change the certificate\'s subject.', readOnly: true },
  { name: 'ssl.allow.san.changes', type: 'BOOLEAN', default: 'false', doc: 'Whether a reloaded key store may drop subject alternative names.', readOnly: true },
  { name: 'ssl.cipher.suites', type: 'LIST', default: null, doc: 'The cipher suites accepted (IANA names); the TLS library\'s defaults when empty.', readOnly: true },
  { name: 'ssl.principal.mapping.rules', type: 'STRING', default: 'DEFAULT', doc: 'Rules mapping a client certificate\'s distinguished name to a user name (RULE:pattern/replacement/[LU], DEFAULT).', readOnly: true },
  { name: 'log.dirs', type: 'LIST', default: './data', doc: 'The directory where Ledgerline keeps its ledgers and metadata.', readOnly: true },
  { name: 'log.dir', type: 'STRING', default: '/tmp/kafka-logs', doc: 'Used when log.dirs is not set.', readOnly: true },
  { name: 'num.partitions', type: 'INT', default: '1', doc: 'Default number of partitions of an auto-created or CreateTopics(-1) topic.', min: 1 },
  { name: 'default.replication.factor', type: 'INT', default: '1', doc: 'Default replication factor. Ledgerline accepts 1 while it runs a single node.', min: 1 },
  { name: 'auto.create.topics.enable', type: 'BOOLEAN', default: 'true', doc: 'Create a topic when Metadata or Produce names one that does not exist.', readOnly: true },
  { name: 'delete.topic.enable', type: 'BOOLEAN', default: 'true', doc: 'Allow DeleteTopics.', readOnly: true },
  { name: 'message.max.bytes', type: 'INT', default: '1048588', doc: 'Largest record batch size allowed (topic default for max.message.bytes).', min: 0 },
  { name: 'socket.request.max.bytes', type: 'INT', default: '104857600', doc: 'Largest request a connection may send.', min: 1, readOnly: true },
  // Kafka's default is -1 (no bound); Ledgerline bounds request memory by default (src/config.ts).
  { name: 'queued.max.request.bytes', type: 'LONG', default: '268435456', doc: 'Request bytes the broker holds, read or being handled, before it stops reading connections; -1: no bound.', readOnly: true },
  { name: 'connections.max.idle.ms', type: 'LONG', default: '600000', doc: 'Close connections idle this long.', readOnly: true },
  // Connection limits (KIP-308, KIP-402): changeable at runtime, per broker or for the cluster, as in Kafka.
  { name: 'max.connections', type: 'INT', default: '2147483647', doc: 'The most connections the broker keeps open at once; a new one past it is closed (the inter-broker listener is exempt).', min: 0 },
  { name: 'max.connections.per.ip', type: 'INT', default: '2147483647', doc: 'The most connections one address may keep open.', min: 0 },
  { name: 'max.connections.per.ip.overrides', type: 'STRING', default: '', doc: 'Per-address exceptions to max.connections.per.ip: ip:limit pairs, comma-separated.' },
  { name: 'log.retention.ms', type: 'LONG', default: null, doc: 'Topic default retention.ms; when null, log.retention.minutes/hours apply.' },
  { name: 'log.retention.minutes', type: 'INT', default: null, doc: 'Used when log.retention.ms is not set.' },
  { name: 'log.retention.hours', type: 'INT', default: '168', doc: 'Used when log.retention.ms and log.retention.minutes are not set.' },
  { name: 'log.retention.bytes', type: 'LONG', default: '-1', doc: 'Topic default retention.bytes.' },
  { name: 'log.retention.check.interval.ms', type: 'LONG', default: '300000', doc: 'How often retention runs.', min: 1 },
  { name: 'ledgerline.log.encryption.required', type: 'BOOLEAN', default: 'false', doc: 'Topic default ledgerline.encryption.required.' },
  { name: 'ledgerline.log.segment.entries', type: 'INT', default: '50000', doc: 'Topic default ledgerline.segment.entries.', min: 1 },
  { name: 'log.segment.bytes', type: 'INT', default: '1073741824', doc: 'Topic default segment.bytes (ledger rollover size).', min: 1024 * 1024 },
  { name: 'log.roll.ms', type: 'LONG', default: null, doc: 'Topic default segment.ms; when null, log.roll.hours applies.' },
  { name: 'log.roll.hours', type: 'INT', default: '168', doc: 'Used when log.roll.ms is not set.', min: 1 },
  { name: 'log.roll.jitter.ms', type: 'LONG', default: null, doc: 'Topic default segment.jitter.ms; when null, log.roll.jitter.hours applies.' },
  { name: 'log.roll.jitter.hours', type: 'INT', default: '0', doc: 'Used when log.roll.jitter.ms is not set.', min: 0 },
  { name: 'log.flush.interval.messages', type: 'LONG', default: LONG_MAX, doc: 'Topic default flush.messages. Ledgerline fsyncs before acknowledging unless flush.messages is raised above 1 on a topic.', min: 1 },
  { name: 'log.flush.interval.ms', type: 'LONG', default: null, doc: 'Topic default flush.ms; when null, log.flush.scheduler.interval.ms applies.' },
  { name: 'log.flush.scheduler.interval.ms', type: 'LONG', default: LONG_MAX, doc: 'Used when log.flush.interval.ms is not set.' },
  { name: 'log.cleanup.policy', type: 'LIST', default: 'delete', doc: 'Topic default cleanup.policy.', oneOf: ['delete', 'compact'] },
  { name: 'log.message.timestamp.type', type: 'STRING', default: 'CreateTime', doc: 'Topic default message.timestamp.type.', oneOf: ['CreateTime', 'LogAppendTime'] },
  { name: 'log.message.timestamp.before.max.ms', type: 'LONG', default: LONG_MAX, doc: 'Topic default message.timestamp.before.max.ms.', min: 0 },
  { name: 'log.message.timestamp.after.max.ms', type: 'LONG', default: '3600000', doc: 'Topic default message.timestamp.after.max.ms.', min: 0 },
  // The log cleaner (src/log/log-cleaner.ts), under Kafka's names and defaults.
  { name: 'log.cleaner.enable', type: 'BOOLEAN', default: 'true', doc: 'Run the log cleaner: topics whose cleanup.policy includes compact are compacted.', readOnly: true },
  { name: 'log.cleaner.threads', type: 'INT', default: '1', doc: 'Compaction passes run at once.', min: 1, readOnly: true },
  { name: 'log.cleaner.backoff.ms', type: 'LONG', default: '15000', doc: 'How long the cleaner sleeps when no log needs cleaning.', min: 0, readOnly: true },
  { name: 'log.cleaner.dedupe.buffer.size', type: 'LONG', default: '134217728', doc: 'Memory for the key maps of all cleaner threads (24 bytes a key).', min: 1, readOnly: true },
  { name: 'log.cleaner.io.buffer.load.factor', type: 'DOUBLE', default: '0.9', doc: 'Fill factor of the key map.', min: 0, max: 1, readOnly: true },
  { name: 'log.cleaner.io.max.bytes.per.second', type: 'DOUBLE', default: '1.7976931348623157E308', doc: 'Most bytes per second the cleaner reads and writes together.', min: 0, readOnly: true },
  { name: 'log.cleaner.delete.retention.ms', type: 'LONG', default: '86400000', doc: 'Topic default delete.retention.ms.', min: 0 },
  { name: 'log.cleaner.min.compaction.lag.ms', type: 'LONG', default: '0', doc: 'Topic default min.compaction.lag.ms.', min: 0 },
  { name: 'log.cleaner.max.compaction.lag.ms', type: 'LONG', default: LONG_MAX, doc: 'Topic default max.compaction.lag.ms.', min: 1 },
  { name: 'log.cleaner.min.cleanable.ratio', type: 'DOUBLE', default: '0.5', doc: 'Topic default min.cleanable.dirty.ratio.', min: 0, max: 1 },
  { name: 'log.index.interval.bytes', type: 'INT', default: '4096', doc: 'Topic default index.interval.bytes.', min: 0 },
  { name: 'log.index.size.max.bytes', type: 'INT', default: '10485760', doc: 'Topic default segment.index.bytes.', min: 4 },
  { name: 'log.segment.delete.delay.ms', type: 'LONG', default: '60000', doc: 'Topic default file.delete.delay.ms.', min: 0 },
  { name: 'log.preallocate', type: 'BOOLEAN', default: 'false', doc: 'Topic default preallocate.' },
  { name: 'log.local.retention.ms', type: 'LONG', default: '-2', doc: 'Topic default local.retention.ms.' },
  { name: 'log.local.retention.bytes', type: 'LONG', default: '-2', doc: 'Topic default local.retention.bytes.' },
  { name: 'compression.type', type: 'STRING', default: 'producer', doc: 'Topic default compression.type.', oneOf: COMPRESSION },
  { name: 'compression.gzip.level', type: 'INT', default: '-1', doc: 'Topic default compression.gzip.level.' },
  { name: 'compression.lz4.level', type: 'INT', default: '9', doc: 'Topic default compression.lz4.level.', min: 1, max: 17 },
  { name: 'compression.zstd.level', type: 'INT', default: '3', doc: 'Topic default compression.zstd.level.', min: -131072, max: 22 },
  { name: 'min.insync.replicas', type: 'INT', default: '1', doc: 'Topic default min.insync.replicas.', min: 1 },
  { name: 'unclean.leader.election.enable', type: 'BOOLEAN', default: 'false', doc: 'Topic default unclean.leader.election.enable.' },
  { name: 'offsets.topic.num.partitions', type: 'INT', default: '50', doc: 'Partitions of __consumer_offsets.', min: 1, readOnly: true },
  { name: 'offsets.topic.replication.factor', type: 'SHORT', default: '3', doc: 'Replication factor of __consumer_offsets (capped to the live brokers when it is created).', min: 1, readOnly: true },
  { name: 'offsets.retention.minutes', type: 'INT', default: '10080', doc: 'Committed offsets of empty groups expire after this.', min: 1 },
  { name: 'offsets.retention.check.interval.ms', type: 'LONG', default: '600000', doc: 'How often expired offsets are removed.', min: 1 },
  { name: 'group.initial.rebalance.delay.ms', type: 'INT', default: '3000', doc: 'Delay before the first rebalance of a new classic group.' },
  { name: 'group.min.session.timeout.ms', type: 'INT', default: '6000', doc: 'Smallest session timeout a classic member may ask for.' },
  { name: 'group.max.session.timeout.ms', type: 'INT', default: '1800000', doc: 'Largest session timeout a classic member may ask for.' },
  { name: 'group.max.size', type: 'INT', default: '2147483647', doc: 'Most members a classic group may have.', min: 1 },
  { name: 'transactional.id.expiration.ms', type: 'INT', default: '604800000', doc: 'Transactional ids unused this long expire.', min: 1 },
  { name: 'producer.id.expiration.ms', type: 'INT', default: '86400000', doc: 'Idempotent producer state unused this long expires.', min: 1 },
  // Membership of a shared cluster (src/cluster/member-view.ts): brokers on one metadata store and one ledger
  // store, each owning the partitions the rendezvous rule gives it through leased keys. broker.session.timeout.ms
  // is KRaft's "length of time that a broker lease lasts if no heartbeats are made" (the controller's, 9000 ms).
  { name: 'ledgerline.cluster.membership', type: 'STRING', default: 'single', oneOf: ['single', 'shared'], doc: 'Ledgerline: single (this broker alone owns every partition) or shared (a member of the brokers sharing its metadata and ledger stores, owning the partitions the rendezvous rule gives it).', readOnly: true },
  { name: 'broker.session.timeout.ms', type: 'INT', default: '9000', doc: 'The broker lease of a shared cluster: a broker that keeps it alive no longer loses its partitions this long after (rounded up to seconds).', min: 1000, readOnly: true },
  { name: 'broker.rack', type: 'STRING', default: null, doc: 'Rack of the broker, reported in Metadata and DescribeCluster.', readOnly: true },
  { name: 'ledgerline.admin.listener', type: 'STRING', default: '', doc: 'Ledgerline: the admin HTTP endpoint (GET /metrics, /health), e.g. http://127.0.0.1:9644; empty disables it.', readOnly: true },
  // Space reclamation of the ledger store (src/ledger/garbage-collector.ts), after BookKeeper's gcWaitTime,
  // minor/majorCompactionThreshold, minor/majorCompactionInterval and compactionRateByBytes. The defaults free a
  // deleted 1 GiB topic within a minute while a long-lived ledger (__consumer_offsets) shares its segments.
  { name: 'ledgerline.storage.gc.interval.ms', type: 'LONG', default: '10000', doc: 'Ledgerline: how often the ledger store\'s garbage collector runs (deletes segments without live entries, compacts); 0 disables it.', min: 0, readOnly: true },
  { name: 'ledgerline.storage.compaction.minor.threshold', type: 'DOUBLE', default: '0.2', doc: 'Ledgerline: minor compaction copies the live entries out of segments whose live fraction is below this; 0 disables it.', min: 0, max: 1, readOnly: true },
  { name: 'ledgerline.storage.compaction.minor.interval.ms', type: 'LONG', default: '10000', doc: 'Ledgerline: how often minor compaction runs (at most once per collector run).', min: 0, readOnly: true },
  { name: 'ledgerline.storage.compaction.major.threshold', type: 'DOUBLE', default: '0.5', doc: 'Ledgerline: major compaction copies the live entries out of segments whose live fraction is below this; 0 disables it.', min: 0, max: 1, readOnly: true },
  { name: 'ledgerline.storage.compaction.major.interval.ms', type: 'LONG', default: '3600000', doc: 'Ledgerline: how often major compaction runs.', min: 0, readOnly: true },
  { name: 'ledgerline.storage.direct.io', type: 'BOOLEAN', default: 'true', doc: 'Ledgerline: appends to the local ledger store bypass the page cache (O_DIRECT) where the file system allows it; the store still fsyncs before every acknowledgement. false writes through the page cache.', readOnly: true },
  { name: 'ledgerline.storage.compaction.rate.bytes', type: 'LONG', default: '33554432', doc: 'Ledgerline: most bytes per second compaction copies.', min: 1, readOnly: true },
  // The engines under the storage contracts, picked by openLedgerStore() (src/ledger/open-store.ts) and
  // openMetadataStore() (src/metadata/open-store.ts); a value outside oneOf is refused as Kafka's ValidString is.
  { name: 'ledgerline.ledger.store', type: 'STRING', default: 'local', oneOf: ['local', 'memory', 'bookkeeper'], doc: 'Ledgerline: the ledger store (partition data): local (embedded, in log.dirs), memory (nothing on disk, lost when the broker stops; for tests) or bookkeeper (Apache BookKeeper bookies, ledgerline.bookkeeper.*).', readOnly: true },
  // The BookKeeper ledger store's client settings (src/ledger/bookkeeper/config.ts).
  { name: 'ledgerline.bookkeeper.metadata.service.uri', type: 'STRING', default: null, doc: "Ledgerline: BookKeeper's metadataServiceUri, e.g. zk+hierarchical://127.0.0.1:2181/ledgers (ledgerline.ledger.store=bookkeeper).", readOnly: true },
  { name: 'ledgerline.bookkeeper.ensemble.size', type: 'INT', default: null, doc: 'Ledgerline: bookies per ledger (BookKeeper ensemble size); default default.replication.factor.', min: 1, readOnly: true },
  { name: 'ledgerline.bookkeeper.write.quorum.size', type: 'INT', default: null, doc: 'Ledgerline: copies of each entry (BookKeeper write quorum); default the ensemble size, at most default.replication.factor.', min: 1, readOnly: true },
  { name: 'ledgerline.bookkeeper.ack.quorum.size', type: 'INT', default: null, doc: 'Ledgerline: copies acknowledged before an append is (BookKeeper ack quorum); default min.insync.replicas.', min: 1, readOnly: true },
  { name: 'ledgerline.bookkeeper.password', type: 'PASSWORD', default: '', doc: "Ledgerline: the password of the store's ledgers (their master key is SHA-1(\"ledger\" + it)).", sensitive: true, readOnly: true },
  { name: 'ledgerline.bookkeeper.digest.type', type: 'STRING', default: 'CRC32C', oneOf: ['CRC32C', 'CRC32', 'MAC', 'DUMMY'], doc: "Ledgerline: BookKeeper's entry digest of new ledgers.", readOnly: true },
  { name: 'ledgerline.bookkeeper.add.entry.timeout.ms', type: 'INT', default: '30000', doc: "Ledgerline: a bookie's add answer is awaited this long, then the bookie is replaced (BookKeeper addEntryTimeoutSec).", min: 1, readOnly: true },
  { name: 'ledgerline.bookkeeper.read.entry.timeout.ms', type: 'INT', default: '30000', doc: 'Ledgerline: a bookie read answer is awaited this long (BookKeeper readEntryTimeoutSec).', min: 1, readOnly: true },
  { name: 'ledgerline.bookkeeper.speculative.read.timeout.ms', type: 'INT', default: '2000', doc: 'Ledgerline: after this long without an answer a read also asks the next replica (BookKeeper speculativeReadTimeout); 0 disables it.', min: 0, readOnly: true },
  { name: 'ledgerline.bookkeeper.zk.session.timeout.ms', type: 'INT', default: '30000', doc: "Ledgerline: the BookKeeper store's ZooKeeper session timeout (BookKeeper zkTimeout).", min: 1, readOnly: true },
  { name: 'ledgerline.metadata.store', type: 'STRING', default: 'sqlite', oneOf: ['sqlite', 'memory', 'zookeeper'], doc: 'Ledgerline: the metadata store (topics, their configs, each partition\'s chain of ledgers): sqlite (embedded, in log.dirs), memory (nothing on disk, lost when the broker stops; for tests) or zookeeper (shared by the cluster\'s brokers, on ledgerline.metadata.zookeeper.connect).', readOnly: true },
  // As Kafka's zookeeper.connect and zookeeper.session.timeout.ms (ZooKeeper mode, before KRaft).
  { name: 'ledgerline.metadata.zookeeper.connect', type: 'STRING', default: '', doc: 'Ledgerline: the ZooKeeper ensemble of the zookeeper metadata store, host:port[,host:port...][/chroot] as Kafka\'s zookeeper.connect; the chroot is created if missing.', readOnly: true },
  { name: 'ledgerline.metadata.zookeeper.session.timeout.ms', type: 'INT', default: '18000', doc: 'Ledgerline: the ZooKeeper session timeout of the zookeeper metadata store, as Kafka\'s zookeeper.session.timeout.ms.', min: 1, readOnly: true },
  { name: 'max.incremental.fetch.session.cache.slots', type: 'INT', default: '1000', doc: 'Fetch sessions (KIP-227) the broker keeps.', min: 0 },
  ...GROUP_COORDINATOR_CONFIG_DEFS,
  ...TRANSACTION_COORDINATOR_CONFIG_DEFS,
];

/** Topic configs (Kafka's TopicConfig), in Kafka's DescribeConfigs order (alphabetical). */
export const TOPIC_CONFIGS: readonly TopicConfigDef[] = [
  { name: 'cleanup.policy', type: 'LIST', default: 'delete', brokerSynonyms: [{ name: 'log.cleanup.policy' }], oneOf: ['delete', 'compact'], doc: 'Retention policy: delete old ledgers, or compact by key.' },
  { name: 'compression.gzip.level', type: 'INT', default: '-1', brokerSynonyms: [{ name: 'compression.gzip.level' }], doc: 'Gzip level when compression.type is gzip.' },
  { name: 'compression.lz4.level', type: 'INT', default: '9', brokerSynonyms: [{ name: 'compression.lz4.level' }], min: 1, max: 17, doc: 'LZ4 level when compression.type is lz4.' },
  { name: 'compression.type', type: 'STRING', default: 'producer', brokerSynonyms: [{ name: 'compression.type' }], oneOf: COMPRESSION, doc: 'Final compression of the topic; producer keeps what the producer sent.' },
  { name: 'compression.zstd.level', type: 'INT', default: '3', brokerSynonyms: [{ name: 'compression.zstd.level' }], min: -131072, max: 22, doc: 'Zstd level when compression.type is zstd.' },
  { name: 'delete.retention.ms', type: 'LONG', default: '86400000', brokerSynonyms: [{ name: 'log.cleaner.delete.retention.ms' }], min: 0, doc: 'How long tombstones are kept on compacted topics.' },
  { name: 'errors.deadletterqueue.group.enable', type: 'BOOLEAN', default: 'false', doc: 'Kafka 4.4 (KIP-1191): the topic may be a share group\'s dead-letter queue. Accepted and described; Ledgerline has no share groups.' },
  { name: 'file.delete.delay.ms', type: 'LONG', default: '60000', brokerSynonyms: [{ name: 'log.segment.delete.delay.ms' }], min: 0, doc: 'Delay before a deleted ledger is removed from disk.' },
  { name: 'flush.messages', type: 'LONG', default: LONG_MAX, brokerSynonyms: [{ name: 'log.flush.interval.messages' }], min: 1, doc: 'Fsync after this many batches. Ledgerline treats the Kafka default as 1 (durable before acknowledged).' },
  { name: 'flush.ms', type: 'LONG', default: LONG_MAX, brokerSynonyms: [{ name: 'log.flush.interval.ms' }, { name: 'log.flush.scheduler.interval.ms' }], min: 0, doc: 'Fsync at least this often.' },
  { name: 'follower.replication.throttled.replicas', type: 'LIST', default: '', brokerSynonyms: [{ name: 'follower.replication.throttled.replicas' }], doc: 'Accepted for compatibility.' },
  { name: 'index.interval.bytes', type: 'INT', default: '4096', brokerSynonyms: [{ name: 'log.index.interval.bytes' }], min: 0, doc: 'Accepted for compatibility; the offset index covers every batch.' },
  { name: 'leader.replication.throttled.replicas', type: 'LIST', default: '', brokerSynonyms: [{ name: 'leader.replication.throttled.replicas' }], doc: 'Accepted for compatibility.' },
  { name: 'ledgerline.encryption.required', type: 'BOOLEAN', default: 'false', brokerSynonyms: [{ name: 'ledgerline.log.encryption.required' }], doc: 'Ledgerline: accept only records carrying a well-formed end-to-end envelope (src/crypto/README.md); others are refused with INVALID_RECORD. The broker holds no key and never decrypts.' },
  { name: 'ledgerline.segment.entries', type: 'INT', default: '50000', brokerSynonyms: [{ name: 'ledgerline.log.segment.entries' }], min: 1, doc: 'Ledgerline: batches after which the partition rolls to a new ledger (bounds what a takeover re-reads).' },
  { name: 'local.retention.bytes', type: 'LONG', default: '-2', brokerSynonyms: [{ name: 'log.local.retention.bytes' }], min: -2, doc: 'Tiered-storage local retention.' },
  { name: 'local.retention.ms', type: 'LONG', default: '-2', brokerSynonyms: [{ name: 'log.local.retention.ms' }], min: -2, doc: 'Tiered-storage local retention.' },
  { name: 'max.compaction.lag.ms', type: 'LONG', default: LONG_MAX, brokerSynonyms: [{ name: 'log.cleaner.max.compaction.lag.ms' }], min: 1, doc: 'Longest a record may stay uncompacted.' },
  { name: 'max.message.bytes', type: 'INT', default: '1048588', brokerSynonyms: [{ name: 'message.max.bytes' }], min: 0, doc: 'Largest record batch size allowed.' },
  { name: 'message.timestamp.after.max.ms', type: 'LONG', default: '3600000', brokerSynonyms: [{ name: 'log.message.timestamp.after.max.ms' }], min: 0, doc: 'How far ahead of the broker clock a CreateTime timestamp may be.' },
  { name: 'message.timestamp.before.max.ms', type: 'LONG', default: LONG_MAX, brokerSynonyms: [{ name: 'log.message.timestamp.before.max.ms' }], min: 0, doc: 'How far behind the broker clock a CreateTime timestamp may be.' },
  { name: 'message.timestamp.type', type: 'STRING', default: 'CreateTime', brokerSynonyms: [{ name: 'log.message.timestamp.type' }], oneOf: ['CreateTime', 'LogAppendTime'], doc: 'CreateTime keeps producer timestamps; LogAppendTime stamps batches on append.' },
  { name: 'min.cleanable.dirty.ratio', type: 'DOUBLE', default: '0.5', brokerSynonyms: [{ name: 'log.cleaner.min.cleanable.ratio' }], min: 0, max: 1, doc: 'Compaction trigger.' },
  { name: 'min.compaction.lag.ms', type: 'LONG', default: '0', brokerSynonyms: [{ name: 'log.cleaner.min.compaction.lag.ms' }], min: 0, doc: 'Shortest a record stays uncompacted.' },
  { name: 'min.insync.replicas', type: 'INT', default: '1', brokerSynonyms: [{ name: 'min.insync.replicas' }], min: 1, doc: 'Replicas that must acknowledge an acks=all produce.' },
  { name: 'preallocate', type: 'BOOLEAN', default: 'false', brokerSynonyms: [{ name: 'log.preallocate' }], doc: 'Accepted for compatibility.' },
  { name: 'remote.log.copy.disable', type: 'BOOLEAN', default: 'false', doc: 'Tiered storage: stop copying to remote storage.' },
  { name: 'remote.log.delete.on.disable', type: 'BOOLEAN', default: 'false', doc: 'Tiered storage: delete remote data when disabled.' },
  { name: 'remote.storage.enable', type: 'BOOLEAN', default: 'false', doc: 'Tiered storage.' },
  { name: 'retention.bytes', type: 'LONG', default: '-1', brokerSynonyms: [{ name: 'log.retention.bytes' }], doc: 'Largest size of a partition before old ledgers are deleted; -1 = no limit.' },
  { name: 'retention.ms', type: 'LONG', default: '604800000', brokerSynonyms: [{ name: 'log.retention.ms' }, { name: 'log.retention.minutes', factor: 60_000 }, { name: 'log.retention.hours', factor: 3_600_000 }], min: -1, doc: 'How long data is kept; -1 = forever.' },
  { name: 'segment.bytes', type: 'INT', default: '1073741824', brokerSynonyms: [{ name: 'log.segment.bytes' }], min: 14, doc: 'Ledger size at which the partition rolls to a new ledger.' },
  { name: 'segment.index.bytes', type: 'INT', default: '10485760', brokerSynonyms: [{ name: 'log.index.size.max.bytes' }], min: 4, doc: 'Accepted for compatibility.' },
  { name: 'segment.jitter.ms', type: 'LONG', default: '0', brokerSynonyms: [{ name: 'log.roll.jitter.ms' }, { name: 'log.roll.jitter.hours', factor: 3_600_000 }], min: 0, doc: 'Random jitter subtracted from segment.ms.' },
  { name: 'segment.ms', type: 'LONG', default: '604800000', brokerSynonyms: [{ name: 'log.roll.ms' }, { name: 'log.roll.hours', factor: 3_600_000 }], min: 1, doc: 'Ledger age at which the partition rolls to a new ledger.' },
  { name: 'unclean.leader.election.enable', type: 'BOOLEAN', default: 'false', brokerSynonyms: [{ name: 'unclean.leader.election.enable' }], doc: 'Accepted for compatibility.' },
];

export const TOPIC_CONFIG_BY_NAME: ReadonlyMap<string, TopicConfigDef> = new Map(TOPIC_CONFIGS.map((d) => [d.name, d]));
export const BROKER_CONFIG_BY_NAME: ReadonlyMap<string, ConfigDef> = new Map(BROKER_CONFIGS.map((d) => [d.name, d]));

/** Why a value is not valid for a config, or null when it is (Kafka's ConfigDef parse + validator). */
export function validateConfigValue(def: ConfigDef, value: string | null): string | null {
  if (value === null) return def.default === null ? null : `Null value not supported for ${def.name}`;
  const v = value.trim();
  switch (def.type) {
    case 'BOOLEAN':
      if (!/^(true|false)$/i.test(v)) return `Invalid value ${quoted(value)} for configuration ${def.name}: Expected value to be either true or false`;
      return null;
    case 'INT':
    case 'SHORT':
    case 'LONG': {
      if (!/^-?\d+$/.test(v)) return `Invalid value ${quoted(value)} for configuration ${def.name}: Not a number of type ${def.type}`;
      const n = BigInt(v);
      const [lo, hi] = def.type === 'INT' ? [-(2n ** 31n), 2n ** 31n - 1n] : def.type === 'SHORT' ? [-32768n, 32767n] : [-(2n ** 63n), 2n ** 63n - 1n];
      if (n < lo || n > hi) return `Invalid value ${quoted(value)} for configuration ${def.name}: Not a number of type ${def.type}`;
      if (def.min !== undefined && n < BigInt(def.min)) return `Invalid value ${quoted(value)} for configuration ${def.name}: Value must be at least ${def.min}`;
      if (def.max !== undefined && n > BigInt(def.max)) return `Invalid value ${quoted(value)} for configuration ${def.name}: Value must be no more than ${def.max}`;
      return null;
    }
    case 'DOUBLE': {
      const n = Number(v);
      if (v === '' || !Number.isFinite(n)) return `Invalid value ${quoted(value)} for configuration ${def.name}: Not a number of type DOUBLE`;
      if (def.min !== undefined && n < def.min) return `Invalid value ${quoted(value)} for configuration ${def.name}: Value must be at least ${def.min}`;
      if (def.max !== undefined && n > def.max) return `Invalid value ${quoted(value)} for configuration ${def.name}: Value must be no more than ${def.max}`;
      return null;
    }
    case 'LIST':
      if (def.oneOf) {
        const items = v.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
        for (const item of items) if (!def.oneOf.includes(item)) return `Invalid value ${quoted(item)} for configuration ${def.name}: String must be one of: ${def.oneOf.join(', ')}`;
      }
      return null;
    default:
      if (def.oneOf && !def.oneOf.includes(v)) return `Invalid value ${quoted(value)} for configuration ${def.name}: String must be one of: ${def.oneOf.join(', ')}`;
      return null;
  }
}

/** Why a value of max.connections.per.ip.overrides is not valid, or null (Kafka's ConnectionQuotas.updateMaxConnectionsPerIpOverride). */
export function invalidOverrides(value: string): string | null {
  try {
    parseOverrides(value);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

export function parseOverrides(value: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const entry of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const i = entry.lastIndexOf(':');
    const limit = i > 0 ? Number(entry.slice(i + 1)) : NaN;
    if (!Number.isInteger(limit) || limit < 0) throw new Error(`Invalid value ${JSON.stringify(entry)} in max.connections.per.ip.overrides: an ip:limit pair is expected`);
    out.set(entry.slice(0, i), limit);
  }
  return out;
}
