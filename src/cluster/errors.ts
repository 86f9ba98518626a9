/**
 * Errors of the cluster layer (topics, partitions, configs). One class: a Kafka error to answer with, as
 * Kafka's controller throws an ApiException (TopicExistsException, InvalidPartitionsException,
 * InvalidConfigurationException, PolicyViolationException, ...) and the request handler turns it into the
 * response's errorCode and errorMessage. It is a LedgerlineError (protocol/errors.ts), so `kafkaErrorOf`
 * answers with its code wherever it is caught.
 *
 * | code                | Kafka error                                                                 |
 * |---------------------|-----------------------------------------------------------------------------|
 * | LL_ERR_CLUSTER_API  | its own `errorCode`: TOPIC_ALREADY_EXISTS, INVALID_TOPIC_EXCEPTION,          |
 * |                     | INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR, INVALID_CONFIG,              |
 * |                     | INVALID_REQUEST, POLICY_VIOLATION, UNKNOWN_TOPIC_OR_PARTITION, ...           |
 *
 * The operation that throws it has changed nothing.
 */
import { LedgerlineError } from '../../protocol/errors.js';

export class ClusterApiError extends LedgerlineError {
  constructor(errorCode: number, message: string) {
    super('LL_ERR_CLUSTER_API', errorCode, message);
  }

  /** The Kafka error code for the response (the same as `kafkaErrorCode`). */
  get errorCode(): number {
    return this.kafkaErrorCode;
  }
}
