/**
 * Ledgerline's Kafka client: a small, dependency-free client built on the project's codec, for the
 * benchmark load generator, tests, and broker-to-broker tools (geo-replication, migration).
 *
 * Layers, each usable on its own:
 *
 *   KafkaClient   typed helpers: produce (pre-built batches), fetch, listOffsets, metadata,
 *                 createTopics, deleteTopics, waitForTopics; errors as data per partition
 *   KafkaAdmin    admin reads for mirroring: topic configs, groups, coordinators, committed offsets
 *   FetchSession  incremental fetch sessions (KIP-227) for consumers of many partitions
 *   Cluster       bootstrap, Metadata refresh on request, leader per partition, N connections per broker
 *   Connection    one socket (TCP or TLS): framing, correlation ids, pipelining, per-request timeouts,
 *                 ApiVersions negotiation (KIP-511 fallback), SASL SCRAM sign-in, pre-encoded request bodies
 *
 * ```ts
 * const client = await KafkaClient.connect({ bootstrap: '127.0.0.1:9092', clientId: 'tool' });
 * await client.createTopics([{ name: 't', numPartitions: 3 }]);
 * await client.waitForTopics(['t']);
 * const [r] = await client.produce([{ topic: 't', partition: 0, records: batch }], { acks: -1 });
 * const [f] = await client.fetch([{ topic: 't', partition: 0, offset: r.baseOffset }]);
 * await client.close();
 * ```
 *
 * For raw throughput, take a connection from the cluster, encode a request body once with
 * `encodeRequestBody`, and send it many times with `Connection.requestEncoded`.
 */
export { KafkaClient, OffsetSpec, IsolationLevel } from './client.js';
export type {
  KafkaClientOptions,
  PartitionResult,
  ProduceEntry,
  ProduceOptions,
  ProduceResult,
  FetchEntry,
  FetchOptions,
  FetchResult,
  ListOffsetsEntry,
  ListOffsetsResult,
  NewTopic,
  CreateTopicResult,
  DeleteTopicResult,
} from './client.js';
export { KafkaAdmin, ConfigSource } from './admin.js';
export type {
  TopicConfigEntry,
  TopicConfigsResult,
  ListedGroup,
  GroupCoordinators,
  GroupOffset,
  GroupOffsetsResult,
  GroupDescription,
} from './admin.js';
export { Cluster, parseHostPort } from './cluster.js';
export type { ClusterOptions, BrokerInfo, TopicInfo, PartitionInfo } from './cluster.js';
export { Connection, encodeRequestBody } from './connection.js';
export type { ConnectionOptions, RequestOptions } from './connection.js';
export { ApiVersionTable } from './versions.js';
export { ScramSaslClient, ScramClientError, authenticateSasl } from './sasl-scram-client.js';
export type { SaslClientOptions, ScramSaslClientOptions, SaslTransport, ScramMechanismName } from './sasl-scram-client.js';
export { FetchSession, FetchSessionEpoch } from './fetch-session.js';
export type { SessionPartition, SessionRequestFields } from './fetch-session.js';
export { FrameSplitter, FrameTooLargeError } from '../../protocol/wire/frames.js';
export {
  ClientError,
  ConnectError,
  ConnectionClosedError,
  RequestTimeoutError,
  ProtocolViolationError,
  UnsupportedApiVersionError,
  MetadataError,
  ClientClosedError,
  KafkaResponseError,
  SaslAuthenticationFailedError,
  throwIfError,
} from './errors.js';
export type { ClientErrorContext } from './errors.js';
