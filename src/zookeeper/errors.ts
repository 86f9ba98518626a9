/**
 * ZooKeeper's error codes (KeeperException.Code) as typed errors. Each is a LedgerlineError with a stable
 * `code` (LL_ERR_ZK_*), ZooKeeper's numeric code (`zkCode`) and the path it was about.
 *
 * | ZooKeeper code        | class                  | Kafka error a request ending on it gets             |
 * |-----------------------|------------------------|-----------------------------------------------------|
 * | NONODE (-101)         | ZooKeeperNoNodeError   | UNKNOWN_SERVER_ERROR: the caller's logic decides    |
 * | NODEEXISTS (-110)     | ZooKeeperNodeExistsError | UNKNOWN_SERVER_ERROR                              |
 * | BADVERSION (-103)     | ZooKeeperBadVersionError | UNKNOWN_SERVER_ERROR                              |
 * | NOTEMPTY (-111)       | ZooKeeperNotEmptyError | UNKNOWN_SERVER_ERROR                                |
 * | CONNECTIONLOSS (-4)   | ZooKeeperConnectionLossError | NOT_CONTROLLER (41): retriable, as a broker that |
 * | OPERATIONTIMEOUT (-7) |                        | lost Kafka's ZooKeeper (KafkaZkClient) answers      |
 * | SESSIONEXPIRED (-112) | ZooKeeperSessionExpiredError | NOT_CONTROLLER (41)                            |
 * | anything else         | ZooKeeperError         | UNKNOWN_SERVER_ERROR                                |
 *
 * ConnectionLoss means the outcome is unknown: a write may or may not have been applied.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

/** ZooKeeper's KeeperException.Code values used here (org.apache.zookeeper.KeeperException.Code). */
export const ZkCode = {
  OK: 0,
  SYSTEM_ERROR: -1,
  RUNTIME_INCONSISTENCY: -2,
  DATA_INCONSISTENCY: -3,
  CONNECTION_LOSS: -4,
  MARSHALLING_ERROR: -5,
  UNIMPLEMENTED: -6,
  OPERATION_TIMEOUT: -7,
  BAD_ARGUMENTS: -8,
  API_ERROR: -100,
  NO_NODE: -101,
  NO_AUTH: -102,
  BAD_VERSION: -103,
  NO_CHILDREN_FOR_EPHEMERALS: -108,
  NODE_EXISTS: -110,
  NOT_EMPTY: -111,
  SESSION_EXPIRED: -112,
  INVALID_ACL: -114,
  AUTH_FAILED: -115,
} as const;

export type ZooKeeperErrorCode =
  | 'LL_ERR_ZK_NO_NODE'
  | 'LL_ERR_ZK_NODE_EXISTS'
  | 'LL_ERR_ZK_BAD_VERSION'
  | 'LL_ERR_ZK_NOT_EMPTY'
  | 'LL_ERR_ZK_CONNECTION_LOSS'
  | 'LL_ERR_ZK_SESSION_EXPIRED'
  | 'LL_ERR_ZK_CLOSED'
  | 'LL_ERR_ZK_BAD_ARGUMENTS'
  | 'LL_ERR_ZK_OTHER';

const KAFKA: Readonly<Record<ZooKeeperErrorCode, number>> = {
  LL_ERR_ZK_NO_NODE: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_ZK_NODE_EXISTS: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_ZK_BAD_VERSION: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_ZK_NOT_EMPTY: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_ZK_CONNECTION_LOSS: ErrorCode.NOT_CONTROLLER,
  LL_ERR_ZK_SESSION_EXPIRED: ErrorCode.NOT_CONTROLLER,
  LL_ERR_ZK_CLOSED: ErrorCode.NOT_CONTROLLER,
  LL_ERR_ZK_BAD_ARGUMENTS: ErrorCode.UNKNOWN_SERVER_ERROR,
  LL_ERR_ZK_OTHER: ErrorCode.UNKNOWN_SERVER_ERROR,
};

export class ZooKeeperError extends LedgerlineError {
  declare readonly code: ZooKeeperErrorCode;
  /** ZooKeeper's numeric code (KeeperException.Code), 0 for errors of this client (closed, bad arguments). */
  readonly zkCode: number;
  /** The znode the failing call was about, when there was one. */
  readonly path: string | undefined;
  constructor(code: ZooKeeperErrorCode, zkCode: number, message: string, path?: string, options?: { cause?: unknown }) {
    super(code, KAFKA[code], path === undefined ? message : `${message}: ${path}`, options);
    this.zkCode = zkCode;
    this.path = path;
  }
}

export class ZooKeeperNoNodeError extends ZooKeeperError {
  constructor(path?: string) {
    super('LL_ERR_ZK_NO_NODE', ZkCode.NO_NODE, 'KeeperErrorCode = NoNode', path);
  }
}
export class ZooKeeperNodeExistsError extends ZooKeeperError {
  constructor(path?: string) {
    super('LL_ERR_ZK_NODE_EXISTS', ZkCode.NODE_EXISTS, 'KeeperErrorCode = NodeExists', path);
  }
}
export class ZooKeeperBadVersionError extends ZooKeeperError {
  constructor(path?: string) {
    super('LL_ERR_ZK_BAD_VERSION', ZkCode.BAD_VERSION, 'KeeperErrorCode = BadVersion', path);
  }
}
export class ZooKeeperNotEmptyError extends ZooKeeperError {
  constructor(path?: string) {
    super('LL_ERR_ZK_NOT_EMPTY', ZkCode.NOT_EMPTY, 'KeeperErrorCode = Directory not empty', path);
  }
}
/** The connection dropped (or an operation timed out) before the answer came: the outcome is unknown. */
export class ZooKeeperConnectionLossError extends ZooKeeperError {
  constructor(path?: string, zkCode: number = ZkCode.CONNECTION_LOSS) {
    super('LL_ERR_ZK_CONNECTION_LOSS', zkCode, 'KeeperErrorCode = ConnectionLoss', path);
  }
}
/** The session is gone: its ephemerals are deleted and its watches lost. A new client is needed. */
export class ZooKeeperSessionExpiredError extends ZooKeeperError {
  constructor(path?: string) {
    super('LL_ERR_ZK_SESSION_EXPIRED', ZkCode.SESSION_EXPIRED, 'KeeperErrorCode = Session expired', path);
  }
}
/** `close()` was called on this client. */
export class ZooKeeperClosedError extends ZooKeeperError {
  constructor(operation: string) {
    super('LL_ERR_ZK_CLOSED', 0, `ZooKeeper client is closed (${operation})`);
  }
}

/** The typed error for ZooKeeper's numeric `zkCode`. */
export function zooKeeperError(zkCode: number, path?: string): ZooKeeperError {
  switch (zkCode) {
    case ZkCode.NO_NODE:
      return new ZooKeeperNoNodeError(path);
    case ZkCode.NODE_EXISTS:
      return new ZooKeeperNodeExistsError(path);
    case ZkCode.BAD_VERSION:
      return new ZooKeeperBadVersionError(path);
    case ZkCode.NOT_EMPTY:
      return new ZooKeeperNotEmptyError(path);
    case ZkCode.CONNECTION_LOSS:
    case ZkCode.OPERATION_TIMEOUT:
      return new ZooKeeperConnectionLossError(path, zkCode);
    case ZkCode.SESSION_EXPIRED:
      return new ZooKeeperSessionExpiredError(path);
    case ZkCode.BAD_ARGUMENTS:
      return new ZooKeeperError('LL_ERR_ZK_BAD_ARGUMENTS', zkCode, 'KeeperErrorCode = BadArguments', path);
    default:
      return new ZooKeeperError('LL_ERR_ZK_OTHER', zkCode, `KeeperErrorCode = ${zkCode}`, path);
  }
}

/** Whether `err` is one of ZooKeeper's "outcome unknown / try again on a new session" errors. */
export function isZooKeeperConnectionError(err: unknown): boolean {
  return err instanceof ZooKeeperConnectionLossError || err instanceof ZooKeeperSessionExpiredError;
}
