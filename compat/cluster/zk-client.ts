/**
 * A few ZooKeeper reads for the launcher (node-zookeeper-client), each with a deadline: connecting, whether a
 * znode exists, waiting for one to appear or go (a watch, no polling), and listing children.
 */
import zookeeper from 'node-zookeeper-client';

export type ZkClient = zookeeper.Client;

/** Connects, or rejects after timeoutMs (the client keeps retrying until then). */
export function connectZk(connectString: string, timeoutMs: number, sessionTimeoutMs = 10_000): Promise<ZkClient> {
  const client = zookeeper.createClient(connectString, { sessionTimeout: sessionTimeoutMs, spinDelay: 200, retries: 1000 });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`could not connect to ZooKeeper at ${connectString} within ${timeoutMs} ms`));
    }, timeoutMs);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.connect();
  });
}

export function exists(client: ZkClient, path: string): Promise<boolean> {
  return new Promise((resolve, reject) => client.exists(path, (err, stat) => (err ? reject(err) : resolve(stat !== null && stat !== undefined))));
}

/** Deletes a znode (any version); nothing when it does not exist. */
export function removeIfExists(client: ZkClient, path: string): Promise<void> {
  return new Promise((resolve, reject) =>
    client.remove(path, -1, (err) => {
      if (err && (err as { name?: string }).name !== 'NO_NODE') reject(err);
      else resolve();
    }),
  );
}

export function children(client: ZkClient, path: string): Promise<string[]> {
  return new Promise((resolve, reject) =>
    client.getChildren(path, (err, names) => {
      if (err && (err as { name?: string }).name === 'NO_NODE') resolve([]);
      else if (err) reject(err);
      else resolve(names);
    }),
  );
}

/**
 * Resolves once `path` exists (present: true) or is gone (present: false), watching it; rejects when
 * `abort()` says why to give up (a process that exited), or after timeoutMs.
 */
export function waitForZnode(
  client: ZkClient,
  path: string,
  present: boolean,
  timeoutMs: number,
  abort: () => string | null = () => null,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err?: Error): void => {
      if (done) return;
      done = true;
      clearInterval(check);
      if (err) reject(err);
      else resolve();
    };
    // The watch wakes us; this timer only enforces the deadline and notices a process that exited.
    const check = setInterval(() => {
      const why = abort();
      if (why !== null) finish(new Error(why));
      else if (Date.now() > deadline) finish(new Error(`${path} did not ${present ? 'appear' : 'go'} within ${timeoutMs} ms`));
    }, 250);
    const look = (): void => {
      if (done) return;
      client.exists(
        path,
        () => look(),
        (err, stat) => {
          if (err) return finish(err instanceof Error ? err : new Error(String(err)));
          if ((stat !== null && stat !== undefined) === present) finish();
        },
      );
    };
    look();
  });
}
