/**
 * What the ledger manager needs of ZooKeeper (`LedgerZk`): the calls BookKeeper's ZK ledger manager makes —
 * get with the znode's version, create (with parents, persistent or ephemeral-sequential), set by version
 * (CAS), delete by version, children. Implemented over the project's ZooKeeper session client
 * (src/zookeeper/), whose typed errors map to the names below.
 */
import { ZooKeeperClient } from '../../zookeeper/client.js';
import { ZooKeeperBadVersionError, ZooKeeperError, ZooKeeperNodeExistsError, ZooKeeperNoNodeError } from '../../zookeeper/errors.js';

/** A znode's data and its version (Stat.version), the CAS token of metadata updates. */
export interface Versioned {
  readonly data: Buffer;
  readonly version: number;
  /** The znode's creation time, ms since the epoch (Stat.ctime). */
  readonly ctime: number;
}

/** A failed ZooKeeper call, by KeeperException name: NO_NODE, NODE_EXISTS, BAD_VERSION, … */
export class ZkError extends Error {
  constructor(
    readonly zkCode: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface LedgerZk {
  /** The znode's data and version, or null when it does not exist. */
  get(path: string): Promise<Versioned | null>;
  /** Creates a znode (its missing parents as empty persistent znodes); returns the created path. */
  create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral-sequential'): Promise<string>;
  /** Sets data if the znode is at `version` (ZkError BAD_VERSION otherwise, NO_NODE if gone); the new version. */
  set(path: string, data: Buffer, version: number): Promise<number>;
  /** Deletes the znode at `version` (-1: any). ZkError NO_NODE when absent. */
  delete(path: string, version: number): Promise<void>;
  /** Child names, or [] when the znode does not exist. */
  children(path: string): Promise<string[]>;
  close(): Promise<void>;
}

function mapError(err: unknown): unknown {
  if (err instanceof ZooKeeperNoNodeError) return new ZkError('NO_NODE', err.message, { cause: err });
  if (err instanceof ZooKeeperNodeExistsError) return new ZkError('NODE_EXISTS', err.message, { cause: err });
  if (err instanceof ZooKeeperBadVersionError) return new ZkError('BAD_VERSION', err.message, { cause: err });
  if (err instanceof ZooKeeperError) return new ZkError(err.code, err.message, { cause: err });
  return err;
}

/** `client` as a LedgerZk; `close()` closes it only when `owned`. */
export function ledgerZkOf(client: ZooKeeperClient, owned: boolean): LedgerZk {
  const wrap = async <T>(f: () => Promise<T>): Promise<T> => {
    try {
      return await f();
    } catch (err) {
      throw mapError(err);
    }
  };
  return {
    async get(path) {
      try {
        const { data, stat } = await client.get(path);
        return { data, version: stat.version, ctime: stat.ctime };
      } catch (err) {
        if (err instanceof ZooKeeperNoNodeError) return null;
        throw mapError(err);
      }
    },
    create: (path, data, mode) =>
      wrap(async () => {
        try {
          return await client.create(path, data, mode);
        } catch (err) {
          const parent = path.slice(0, path.lastIndexOf('/'));
          if (!(err instanceof ZooKeeperNoNodeError) || parent === '') throw err;
          // ZkUtils.asyncCreateFullPathOptimistic: create the parents, then try again.
          await client.mkdirp(parent);
          return client.create(path, data, mode);
        }
      }),
    set: (path, data, version) => wrap(async () => (await client.set(path, data, version)).version),
    delete: (path, version) => wrap(() => client.delete(path, version)),
    async children(path) {
      try {
        return (await client.getChildren(path)).children;
      } catch (err) {
        if (err instanceof ZooKeeperNoNodeError) return [];
        throw mapError(err);
      }
    },
    close: async () => {
      if (owned) await client.close();
    },
  };
}

/** Connects a session to `connectString` (host:port[,host:port…][/chroot]). */
export async function connectLedgerZk(connectString: string, options: { sessionTimeoutMs?: number; timeoutMs?: number } = {}): Promise<LedgerZk> {
  const client = await ZooKeeperClient.connect({ connect: connectString, sessionTimeoutMs: options.sessionTimeoutMs, connectTimeoutMs: options.timeoutMs ?? 10_000 });
  return ledgerZkOf(client, true);
}
