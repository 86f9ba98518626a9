/**
 * Partition-level error codes shared by the handlers that read or write partition logs.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { LogError } from '../log/errors.js';

/** The error code for a failed log operation (a LogError without a Kafka code is a storage failure). */
export function logErrorCode(e: LogError): number {
  return e.kafkaErrorCode === ErrorCode.NONE ? ErrorCode.KAFKA_STORAGE_ERROR : e.kafkaErrorCode;
}

/**
 * KIP-320's leader epoch check: a request naming an older epoch than the partition's is fenced, a newer
 * one is unknown to this leader; -1 (no epoch) always passes.
 */
export function leaderEpochError(requested: number, current: number): number {
  if (requested < 0 || requested === current) return ErrorCode.NONE;
  return requested < current ? ErrorCode.FENCED_LEADER_EPOCH : ErrorCode.UNKNOWN_LEADER_EPOCH;
}
