/**
 * Kafka's error codes: every code of `org.apache.kafka.common.protocol.Errors`, with its name, whether a
 * client treats it as retriable and the default message of its exception.
 *
 * Source: Kafka 4.4.0's Errors (the table its `Errors.main` prints for the protocol documentation), codes
 * -1 to 136. `retriable` is true exactly when the error's exception class extends
 * `org.apache.kafka.common.errors.RetriableException` (directly or through `InvalidMetadataException` /
 * `RefreshRetriableException`): the "Retriable" column of that table. The flags of the codes 3.9 knows are
 * the same in 3.9.
 *
 * Differences from older brokers, for readers of their logs:
 *   - 3.9 ends at 127; 4.0 adds 128 INVALID_REGULAR_EXPRESSION (KIP-848 regex subscriptions) and
 *     129 REBOOTSTRAP_REQUIRED (KIP-1102); 4.1 adds 130-132 STREAMS_* (KIP-1071) and
 *     133 SHARE_SESSION_LIMIT_REACHED (KIP-932); 4.2 has the same table as 4.1; 4.4 has 134
 *     GROUP_DELETION_FAILED, 135 STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED and 136
 *     CONTROLLER_ID_NOT_REGISTERED.
 *   - Default messages that changed: 24 INVALID_GROUP_ID and 81 GROUP_MAX_SIZE_REACHED read "The configured
 *     groupId is invalid." and "The consumer group has reached its max size." up to 4.0; 129 read "Client
 *     metadata is stale, client should rebootstrap to obtain new metadata." in 4.0; 124 FENCED_STATE_EPOCH
 *     read "The share coordinator rejected the request because the share-group state epoch did not match."
 *     up to 4.2.
 *
 * A handler reports an error as data: `errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION`. A client that does not
 * know a code treats it as UNKNOWN_SERVER_ERROR (Kafka's `Errors.forCode`), so a broker must not send a code
 * that a request's version predates; choosing the code for a version is the handler's job, not this table's.
 */

/** Error codes by Kafka name. `NONE` (0) is success. */
export const ErrorCode = {
  UNKNOWN_SERVER_ERROR: -1,
  NONE: 0,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_FETCH_SIZE: 4,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  BROKER_NOT_AVAILABLE: 8,
  REPLICA_NOT_AVAILABLE: 9,
  MESSAGE_TOO_LARGE: 10,
  STALE_CONTROLLER_EPOCH: 11,
  OFFSET_METADATA_TOO_LARGE: 12,
  NETWORK_EXCEPTION: 13,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_TOPIC_EXCEPTION: 17,
  RECORD_LIST_TOO_LARGE: 18,
  NOT_ENOUGH_REPLICAS: 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 20,
  INVALID_REQUIRED_ACKS: 21,
  ILLEGAL_GENERATION: 22,
  INCONSISTENT_GROUP_PROTOCOL: 23,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26,
  REBALANCE_IN_PROGRESS: 27,
  INVALID_COMMIT_OFFSET_SIZE: 28,
  TOPIC_AUTHORIZATION_FAILED: 29,
  GROUP_AUTHORIZATION_FAILED: 30,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  INVALID_TIMESTAMP: 32,
  UNSUPPORTED_SASL_MECHANISM: 33,
  ILLEGAL_SASL_STATE: 34,
  UNSUPPORTED_VERSION: 35,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  INVALID_REPLICATION_FACTOR: 38,
  INVALID_REPLICA_ASSIGNMENT: 39,
  INVALID_CONFIG: 40,
  NOT_CONTROLLER: 41,
  INVALID_REQUEST: 42,
  UNSUPPORTED_FOR_MESSAGE_FORMAT: 43,
  POLICY_VIOLATION: 44,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TXN_STATE: 48,
  INVALID_PRODUCER_ID_MAPPING: 49,
  INVALID_TRANSACTION_TIMEOUT: 50,
  CONCURRENT_TRANSACTIONS: 51,
  TRANSACTION_COORDINATOR_FENCED: 52,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  SECURITY_DISABLED: 54,
  OPERATION_NOT_ATTEMPTED: 55,
  KAFKA_STORAGE_ERROR: 56,
  LOG_DIR_NOT_FOUND: 57,
  SASL_AUTHENTICATION_FAILED: 58,
  UNKNOWN_PRODUCER_ID: 59,
  REASSIGNMENT_IN_PROGRESS: 60,
  DELEGATION_TOKEN_AUTH_DISABLED: 61,
  DELEGATION_TOKEN_NOT_FOUND: 62,
  DELEGATION_TOKEN_OWNER_MISMATCH: 63,
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: 64,
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: 65,
  DELEGATION_TOKEN_EXPIRED: 66,
  INVALID_PRINCIPAL_TYPE: 67,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  FETCH_SESSION_ID_NOT_FOUND: 70,
  INVALID_FETCH_SESSION_EPOCH: 71,
  LISTENER_NOT_FOUND: 72,
  TOPIC_DELETION_DISABLED: 73,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 75,
  UNSUPPORTED_COMPRESSION_TYPE: 76,
  STALE_BROKER_EPOCH: 77,
  OFFSET_NOT_AVAILABLE: 78,
  MEMBER_ID_REQUIRED: 79,
  PREFERRED_LEADER_NOT_AVAILABLE: 80,
  GROUP_MAX_SIZE_REACHED: 81,
  FENCED_INSTANCE_ID: 82,
  ELIGIBLE_LEADERS_NOT_AVAILABLE: 83,
  ELECTION_NOT_NEEDED: 84,
  NO_REASSIGNMENT_IN_PROGRESS: 85,
  GROUP_SUBSCRIBED_TO_TOPIC: 86,
  INVALID_RECORD: 87,
  UNSTABLE_OFFSET_COMMIT: 88,
  THROTTLING_QUOTA_EXCEEDED: 89,
  PRODUCER_FENCED: 90,
  RESOURCE_NOT_FOUND: 91,
  DUPLICATE_RESOURCE: 92,
  UNACCEPTABLE_CREDENTIAL: 93,
  INCONSISTENT_VOTER_SET: 94,
  INVALID_UPDATE_VERSION: 95,
  FEATURE_UPDATE_FAILED: 96,
  PRINCIPAL_DESERIALIZATION_FAILURE: 97,
  SNAPSHOT_NOT_FOUND: 98,
  POSITION_OUT_OF_RANGE: 99,
  UNKNOWN_TOPIC_ID: 100,
  DUPLICATE_BROKER_REGISTRATION: 101,
  BROKER_ID_NOT_REGISTERED: 102,
  INCONSISTENT_TOPIC_ID: 103,
  INCONSISTENT_CLUSTER_ID: 104,
  TRANSACTIONAL_ID_NOT_FOUND: 105,
  FETCH_SESSION_TOPIC_ID_ERROR: 106,
  INELIGIBLE_REPLICA: 107,
  NEW_LEADER_ELECTED: 108,
  OFFSET_MOVED_TO_TIERED_STORAGE: 109,
  FENCED_MEMBER_EPOCH: 110,
  UNRELEASED_INSTANCE_ID: 111,
  UNSUPPORTED_ASSIGNOR: 112,
  STALE_MEMBER_EPOCH: 113,
  MISMATCHED_ENDPOINT_TYPE: 114,
  UNSUPPORTED_ENDPOINT_TYPE: 115,
  UNKNOWN_CONTROLLER_ID: 116,
  UNKNOWN_SUBSCRIPTION_ID: 117,
  TELEMETRY_TOO_LARGE: 118,
  INVALID_REGISTRATION: 119,
  TRANSACTION_ABORTABLE: 120,
  INVALID_RECORD_STATE: 121,
  SHARE_SESSION_NOT_FOUND: 122,
  INVALID_SHARE_SESSION_EPOCH: 123,
  FENCED_STATE_EPOCH: 124,
  INVALID_VOTER_KEY: 125,
  DUPLICATE_VOTER: 126,
  VOTER_NOT_FOUND: 127,
  INVALID_REGULAR_EXPRESSION: 128,
  REBOOTSTRAP_REQUIRED: 129,
  STREAMS_INVALID_TOPOLOGY: 130,
  STREAMS_INVALID_TOPOLOGY_EPOCH: 131,
  STREAMS_TOPOLOGY_FENCED: 132,
  SHARE_SESSION_LIMIT_REACHED: 133,
  GROUP_DELETION_FAILED: 134,
  STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: 135,
  CONTROLLER_ID_NOT_REGISTERED: 136,
} as const;

export type ErrorName = keyof typeof ErrorCode;
export type ErrorCodeValue = (typeof ErrorCode)[ErrorName];

/**
 * `[retriable, default message]` for each name. Typed by `ErrorCode`'s keys, so a name missing here (or one
 * that is not in `ErrorCode`) fails to compile. `NONE` has no exception and therefore no message.
 */
const DETAILS: { readonly [N in ErrorName]: readonly [retriable: boolean, message: string | null] } = {
  UNKNOWN_SERVER_ERROR: [false, 'The server experienced an unexpected error when processing the request.'],
  NONE: [false, null],
  OFFSET_OUT_OF_RANGE: [false, 'The requested offset is not within the range of offsets maintained by the server.'],
  CORRUPT_MESSAGE: [
    true,
    'This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.',
  ],
  UNKNOWN_TOPIC_OR_PARTITION: [true, 'This server does not host this topic-partition.'],
  INVALID_FETCH_SIZE: [false, 'The requested fetch size is invalid.'],
  LEADER_NOT_AVAILABLE: [
    true,
    'There is no leader for this topic-partition as we are in the middle of a leadership election.',
  ],
  NOT_LEADER_OR_FOLLOWER: [
    true,
    'For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.',
  ],
  REQUEST_TIMED_OUT: [true, 'The request timed out.'],
  BROKER_NOT_AVAILABLE: [false, 'The broker is not available.'],
  REPLICA_NOT_AVAILABLE: [
    true,
    'The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.',
  ],
  MESSAGE_TOO_LARGE: [false, 'The request included a message larger than the max message size the server will accept.'],
  STALE_CONTROLLER_EPOCH: [false, 'The controller moved to another broker.'],
  OFFSET_METADATA_TOO_LARGE: [false, 'The metadata field of the offset request was too large.'],
  NETWORK_EXCEPTION: [true, 'The server disconnected before a response was received.'],
  COORDINATOR_LOAD_IN_PROGRESS: [true, "The coordinator is loading and hence can't process requests."],
  COORDINATOR_NOT_AVAILABLE: [true, 'The coordinator is not available.'],
  NOT_COORDINATOR: [true, 'This is not the correct coordinator.'],
  INVALID_TOPIC_EXCEPTION: [false, 'The request attempted to perform an operation on an invalid topic.'],
  RECORD_LIST_TOO_LARGE: [
    false,
    'The request included message batch larger than the configured segment size on the server.',
  ],
  NOT_ENOUGH_REPLICAS: [true, 'Messages are rejected since there are fewer in-sync replicas than required.'],
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: [
    true,
    'Messages are written to the log, but to fewer in-sync replicas than required.',
  ],
  INVALID_REQUIRED_ACKS: [false, 'Produce request specified an invalid value for required acks.'],
  ILLEGAL_GENERATION: [false, 'Specified group generation id is not valid.'],
  INCONSISTENT_GROUP_PROTOCOL: [
    false,
    "The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.",
  ],
  INVALID_GROUP_ID: [false, 'The group id is invalid.'],
  UNKNOWN_MEMBER_ID: [false, 'The coordinator is not aware of this member.'],
  INVALID_SESSION_TIMEOUT: [
    false,
    'The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).',
  ],
  REBALANCE_IN_PROGRESS: [false, 'The group is rebalancing, so a rejoin is needed.'],
  INVALID_COMMIT_OFFSET_SIZE: [false, 'The committing offset data size is not valid.'],
  TOPIC_AUTHORIZATION_FAILED: [false, 'Topic authorization failed.'],
  GROUP_AUTHORIZATION_FAILED: [false, 'Group authorization failed.'],
  CLUSTER_AUTHORIZATION_FAILED: [false, 'Cluster authorization failed.'],
  INVALID_TIMESTAMP: [false, 'The timestamp of the message is out of acceptable range.'],
  UNSUPPORTED_SASL_MECHANISM: [false, 'The broker does not support the requested SASL mechanism.'],
  ILLEGAL_SASL_STATE: [false, 'Request is not valid given the current SASL state.'],
  UNSUPPORTED_VERSION: [false, 'The version of API is not supported.'],
  TOPIC_ALREADY_EXISTS: [false, 'Topic with this name already exists.'],
  INVALID_PARTITIONS: [false, 'Number of partitions is below 1.'],
  INVALID_REPLICATION_FACTOR: [false, 'Replication factor is below 1 or larger than the number of available brokers.'],
  INVALID_REPLICA_ASSIGNMENT: [false, 'Replica assignment is invalid.'],
  INVALID_CONFIG: [false, 'Configuration is invalid.'],
  NOT_CONTROLLER: [true, 'This is not the correct controller for this cluster.'],
  INVALID_REQUEST: [
    false,
    'This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.',
  ],
  UNSUPPORTED_FOR_MESSAGE_FORMAT: [false, 'The message format version on the broker does not support the request.'],
  POLICY_VIOLATION: [false, 'Request parameters do not satisfy the configured policy.'],
  OUT_OF_ORDER_SEQUENCE_NUMBER: [false, 'The broker received an out of order sequence number.'],
  DUPLICATE_SEQUENCE_NUMBER: [false, 'The broker received a duplicate sequence number.'],
  INVALID_PRODUCER_EPOCH: [false, 'Producer attempted to produce with an old epoch.'],
  INVALID_TXN_STATE: [false, 'The producer attempted a transactional operation in an invalid state.'],
  INVALID_PRODUCER_ID_MAPPING: [
    false,
    'The producer attempted to use a producer id which is not currently assigned to its transactional id.',
  ],
  INVALID_TRANSACTION_TIMEOUT: [
    false,
    'The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).',
  ],
  CONCURRENT_TRANSACTIONS: [
    true,
    'The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.',
  ],
  TRANSACTION_COORDINATOR_FENCED: [
    false,
    'Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.',
  ],
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: [false, 'Transactional Id authorization failed.'],
  SECURITY_DISABLED: [false, 'Security features are disabled.'],
  OPERATION_NOT_ATTEMPTED: [
    false,
    'The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.',
  ],
  KAFKA_STORAGE_ERROR: [true, 'Disk error when trying to access log file on the disk.'],
  LOG_DIR_NOT_FOUND: [false, 'The user-specified log directory is not found in the broker config.'],
  SASL_AUTHENTICATION_FAILED: [false, 'SASL Authentication failed.'],
  UNKNOWN_PRODUCER_ID: [
    false,
    "This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception.",
  ],
  REASSIGNMENT_IN_PROGRESS: [false, 'A partition reassignment is in progress.'],
  DELEGATION_TOKEN_AUTH_DISABLED: [false, 'Delegation Token feature is not enabled.'],
  DELEGATION_TOKEN_NOT_FOUND: [false, 'Delegation Token is not found on server.'],
  DELEGATION_TOKEN_OWNER_MISMATCH: [false, 'Specified Principal is not valid Owner/Renewer.'],
  DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: [
    false,
    'Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.',
  ],
  DELEGATION_TOKEN_AUTHORIZATION_FAILED: [false, 'Delegation Token authorization failed.'],
  DELEGATION_TOKEN_EXPIRED: [false, 'Delegation Token is expired.'],
  INVALID_PRINCIPAL_TYPE: [false, 'Supplied principalType is not supported.'],
  NON_EMPTY_GROUP: [false, 'The group is not empty.'],
  GROUP_ID_NOT_FOUND: [false, 'The group id does not exist.'],
  FETCH_SESSION_ID_NOT_FOUND: [true, 'The fetch session ID was not found.'],
  INVALID_FETCH_SESSION_EPOCH: [true, 'The fetch session epoch is invalid.'],
  LISTENER_NOT_FOUND: [
    true,
    'There is no listener on the leader broker that matches the listener on which metadata request was processed.',
  ],
  TOPIC_DELETION_DISABLED: [false, 'Topic deletion is disabled.'],
  FENCED_LEADER_EPOCH: [true, 'The leader epoch in the request is older than the epoch on the broker.'],
  UNKNOWN_LEADER_EPOCH: [true, 'The leader epoch in the request is newer than the epoch on the broker.'],
  UNSUPPORTED_COMPRESSION_TYPE: [
    false,
    'The requesting client does not support the compression type of given partition.',
  ],
  STALE_BROKER_EPOCH: [false, 'Broker epoch has changed.'],
  OFFSET_NOT_AVAILABLE: [
    true,
    'The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.',
  ],
  MEMBER_ID_REQUIRED: [
    false,
    'The group member needs to have a valid member id before actually entering a consumer group.',
  ],
  PREFERRED_LEADER_NOT_AVAILABLE: [true, 'The preferred leader was not available.'],
  GROUP_MAX_SIZE_REACHED: [false, 'The group has reached its maximum size.'],
  FENCED_INSTANCE_ID: [
    false,
    'The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.',
  ],
  ELIGIBLE_LEADERS_NOT_AVAILABLE: [true, 'Eligible topic partition leaders are not available.'],
  ELECTION_NOT_NEEDED: [true, 'Leader election not needed for topic partition.'],
  NO_REASSIGNMENT_IN_PROGRESS: [false, 'No partition reassignment is in progress.'],
  GROUP_SUBSCRIBED_TO_TOPIC: [
    false,
    'Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.',
  ],
  INVALID_RECORD: [false, 'This record has failed the validation on broker and hence will be rejected.'],
  UNSTABLE_OFFSET_COMMIT: [true, 'There are unstable offsets that need to be cleared.'],
  THROTTLING_QUOTA_EXCEEDED: [true, 'The throttling quota has been exceeded.'],
  PRODUCER_FENCED: [false, 'There is a newer producer with the same transactionalId which fences the current one.'],
  RESOURCE_NOT_FOUND: [false, 'A request illegally referred to a resource that does not exist.'],
  DUPLICATE_RESOURCE: [false, 'A request illegally referred to the same resource twice.'],
  UNACCEPTABLE_CREDENTIAL: [false, 'Requested credential would not meet criteria for acceptability.'],
  INCONSISTENT_VOTER_SET: [
    false,
    'Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters.',
  ],
  INVALID_UPDATE_VERSION: [false, 'The given update version was invalid.'],
  FEATURE_UPDATE_FAILED: [false, 'Unable to update finalized features due to an unexpected server error.'],
  PRINCIPAL_DESERIALIZATION_FAILURE: [
    false,
    'Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup.',
  ],
  SNAPSHOT_NOT_FOUND: [false, 'Requested snapshot was not found.'],
  POSITION_OUT_OF_RANGE: [
    false,
    'Requested position is not greater than or equal to zero, and less than the size of the snapshot.',
  ],
  UNKNOWN_TOPIC_ID: [true, 'This server does not host this topic ID.'],
  DUPLICATE_BROKER_REGISTRATION: [false, 'This broker ID is already in use.'],
  BROKER_ID_NOT_REGISTERED: [false, 'The given broker ID was not registered.'],
  INCONSISTENT_TOPIC_ID: [true, "The log's topic ID did not match the topic ID in the request."],
  INCONSISTENT_CLUSTER_ID: [false, 'The clusterId in the request does not match that found on the server.'],
  TRANSACTIONAL_ID_NOT_FOUND: [false, 'The transactionalId could not be found.'],
  FETCH_SESSION_TOPIC_ID_ERROR: [true, 'The fetch session encountered inconsistent topic ID usage.'],
  INELIGIBLE_REPLICA: [false, 'The new ISR contains at least one ineligible replica.'],
  NEW_LEADER_ELECTED: [
    false,
    'The AlterPartition request successfully updated the partition state but the leader has changed.',
  ],
  OFFSET_MOVED_TO_TIERED_STORAGE: [false, 'The requested offset is moved to tiered storage.'],
  FENCED_MEMBER_EPOCH: [
    false,
    'The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.',
  ],
  UNRELEASED_INSTANCE_ID: [
    false,
    'The instance ID is still used by another member in the consumer group. That member must leave first.',
  ],
  UNSUPPORTED_ASSIGNOR: [false, 'The assignor or its version range is not supported by the consumer group.'],
  STALE_MEMBER_EPOCH: [
    false,
    'The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API.',
  ],
  MISMATCHED_ENDPOINT_TYPE: [false, 'The request was sent to an endpoint of the wrong type.'],
  UNSUPPORTED_ENDPOINT_TYPE: [false, 'This endpoint type is not supported yet.'],
  UNKNOWN_CONTROLLER_ID: [false, 'This controller ID is not known.'],
  UNKNOWN_SUBSCRIPTION_ID: [false, 'Client sent a push telemetry request with an invalid or outdated subscription ID.'],
  TELEMETRY_TOO_LARGE: [
    false,
    'Client sent a push telemetry request larger than the maximum size the broker will accept.',
  ],
  INVALID_REGISTRATION: [false, 'The controller has considered the broker registration to be invalid.'],
  TRANSACTION_ABORTABLE: [
    false,
    'The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID.',
  ],
  INVALID_RECORD_STATE: [false, 'The record state is invalid. The acknowledgement of delivery could not be completed.'],
  SHARE_SESSION_NOT_FOUND: [true, 'The share session was not found.'],
  INVALID_SHARE_SESSION_EPOCH: [true, 'The share session epoch is invalid.'],
  FENCED_STATE_EPOCH: [false, 'The coordinator rejected the request because the state epoch did not match.'],
  INVALID_VOTER_KEY: [false, "The voter key doesn't match the receiving replica's key."],
  DUPLICATE_VOTER: [false, 'The voter is already part of the set of voters.'],
  VOTER_NOT_FOUND: [false, 'The voter is not part of the set of voters.'],
  INVALID_REGULAR_EXPRESSION: [false, 'The regular expression is not valid.'],
  REBOOTSTRAP_REQUIRED: [false, 'Client metadata is stale. The client should rebootstrap to obtain new metadata.'],
  STREAMS_INVALID_TOPOLOGY: [false, 'The supplied topology is invalid.'],
  STREAMS_INVALID_TOPOLOGY_EPOCH: [false, 'The supplied topology epoch is invalid.'],
  STREAMS_TOPOLOGY_FENCED: [false, 'The supplied topology epoch is outdated.'],
  SHARE_SESSION_LIMIT_REACHED: [true, 'The limit of share sessions has been reached.'],
  GROUP_DELETION_FAILED: [
    false,
    'DeleteGroups could not complete; see the error message on the per-group result for details.',
  ],
  STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: [
    false,
    'The broker could not process the topology description update; see the error message for details.',
  ],
  CONTROLLER_ID_NOT_REGISTERED: [false, 'The given controller ID was not registered.'],
};

export interface KafkaErrorInfo {
  readonly code: number;
  readonly name: ErrorName;
  readonly retriable: boolean;
  /** Kafka's default exception message; null for NONE. */
  readonly message: string | null;
  /** False for a code this table does not define (the entry then describes UNKNOWN_SERVER_ERROR). */
  readonly known: boolean;
}

const MIN_CODE = -1;

/** Every error, in code order (UNKNOWN_SERVER_ERROR, NONE, OFFSET_OUT_OF_RANGE, ...). */
export const ALL_ERRORS: readonly KafkaErrorInfo[] = Object.freeze(
  (Object.keys(ErrorCode) as ErrorName[])
    .map((name): KafkaErrorInfo => {
      const [retriable, message] = DETAILS[name];
      return Object.freeze({ code: ErrorCode[name], name, retriable, message, known: true });
    })
    .sort((a, b) => a.code - b.code),
);

/** Dense lookup by `code - MIN_CODE`; codes are contiguous from -1, so this is a plain array index. */
const BY_CODE: (KafkaErrorInfo | undefined)[] = [];
for (const e of ALL_ERRORS) BY_CODE[e.code - MIN_CODE] = e;

const BY_NAME = new Map<string, KafkaErrorInfo>(ALL_ERRORS.map((e) => [e.name, e]));

/** Kafka's highest defined error code. */
export const MAX_ERROR_CODE: number = ALL_ERRORS[ALL_ERRORS.length - 1]!.code;

/**
 * The error for a code. An unknown code is reported the way Kafka's clients treat it
 * (`Errors.forCode` falls back to UNKNOWN_SERVER_ERROR): name UNKNOWN_SERVER_ERROR, not retriable, with a
 * message that keeps the original code so a log line still says what was received.
 */
export function errorByCode(code: number): KafkaErrorInfo {
  const known = Number.isInteger(code) ? BY_CODE[code - MIN_CODE] : undefined;
  if (known !== undefined) return known;
  return {
    code,
    name: 'UNKNOWN_SERVER_ERROR',
    retriable: false,
    message: `Unexpected error code ${code}; treated as UNKNOWN_SERVER_ERROR.`,
    known: false,
  };
}

/** The error for a Kafka name (`'NOT_COORDINATOR'`), or undefined. */
export function errorByName(name: string): KafkaErrorInfo | undefined {
  return BY_NAME.get(name);
}

/** Whether a Kafka client retries on this code (unknown codes are not retriable). */
export function isRetriable(code: number): boolean {
  return errorByCode(code).retriable;
}
