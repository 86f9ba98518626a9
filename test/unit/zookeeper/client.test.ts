/**
 * ZooKeeperClient against a real ZooKeeper server (compat/cluster, the development-cluster launcher). Session expiry is
 * forced by a TCP relay between the client and the server that stops relaying: the client's pings go
 * unanswered, the server expires the session, and the client learns it when it reconnects.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZooKeeperClient, ZooKeeperMultiError, parseConnectString } from '../../../src/zookeeper/client.js';
import {
  ZooKeeperBadVersionError,
  ZooKeeperError,
  ZooKeeperNoNodeError,
  ZooKeeperNodeExistsError,
  ZooKeeperNotEmptyError,
  ZooKeeperSessionExpiredError,
} from '../../../src/zookeeper/errors.js';
import { StallingRelay } from '../../support/stalling-relay.js';
import { bookKeeperClasspath, requireBookKeeper, startZooKeeper, type ZooKeeperProcess } from '../../../compat/cluster/index.js';

const available = bookKeeperClasspath() !== undefined || requireBookKeeper();

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(!available)('ZooKeeperClient on a real ZooKeeper', () => {
  let zk: ZooKeeperProcess;
  let client: ZooKeeperClient;

  beforeAll(async () => {
    zk = await startZooKeeper({ tickTimeMs: 500 });
    client = await ZooKeeperClient.connect({ connect: `${zk.connectString}/client-test`, createChroot: true, sessionTimeoutMs: 4_000 });
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await zk?.stop();
  });

  it('parses connect strings with and without a chroot', () => {
    expect(parseConnectString('a:1,b:2/x/y')).toEqual({ servers: 'a:1,b:2', chroot: '/x/y' });
    expect(parseConnectString('a:1')).toEqual({ servers: 'a:1', chroot: '' });
    expect(parseConnectString('a:1/')).toEqual({ servers: 'a:1', chroot: '' });
    expect(() => parseConnectString('')).toThrow(ZooKeeperError);
  });

  it('creates, reads, sets with versions and deletes znodes, with typed errors', async () => {
    expect(await client.create('/crud', Buffer.from('one'))).toBe('/crud');
    await expect(client.create('/crud')).rejects.toBeInstanceOf(ZooKeeperNodeExistsError);
    const got = await client.get('/crud');
    expect(got.data.toString()).toBe('one');
    expect(got.stat.version).toBe(0);
    expect(got.stat.ephemeralOwner).toBeNull();
    const stat = await client.set('/crud', Buffer.from('two'), 0);
    expect(stat.version).toBe(1);
    await expect(client.set('/crud', Buffer.from('three'), 0)).rejects.toBeInstanceOf(ZooKeeperBadVersionError);
    await client.create('/crud/child');
    await expect(client.delete('/crud')).rejects.toBeInstanceOf(ZooKeeperNotEmptyError);
    expect((await client.getChildren('/crud')).children).toEqual(['child']);
    await client.delete('/crud/child');
    await expect(client.delete('/crud', 0)).rejects.toBeInstanceOf(ZooKeeperBadVersionError);
    await client.delete('/crud', 1);
    expect((await client.exists('/crud')).stat).toBeNull();
    await expect(client.get('/crud')).rejects.toBeInstanceOf(ZooKeeperNoNodeError);
    const seq = await client.create('/seq-', Buffer.alloc(0), 'persistent-sequential');
    expect(seq).toMatch(/^\/seq-\d{10}$/);
  });

  it('refuses an invalid path with a typed error instead of throwing', async () => {
    await expect(client.get('no-slash')).rejects.toMatchObject({ code: 'LL_ERR_ZK_BAD_ARGUMENTS' });
    await expect(client.create('/a/')).rejects.toMatchObject({ code: 'LL_ERR_ZK_BAD_ARGUMENTS' });
    await expect(client.create('/nul\u0000')).rejects.toMatchObject({ code: 'LL_ERR_ZK_BAD_ARGUMENTS' });
  });

  it('applies a multi whole, with per-op results', async () => {
    await client.create('/m', Buffer.from('0'));
    const results = await client.multi([
      { type: 'check', path: '/m', version: 0 },
      { type: 'set', path: '/m', data: Buffer.from('1'), version: 0 },
      { type: 'create', path: '/m/a', data: Buffer.from('a') },
      { type: 'create', path: '/m/s-', mode: 'persistent-sequential' },
    ]);
    expect(results[0]).toEqual({ type: 'check' });
    expect(results[1]).toMatchObject({ type: 'set', stat: { version: 1 } });
    expect(results[2]).toEqual({ type: 'create', path: '/m/a' });
    expect(results[3]).toMatchObject({ type: 'create' });
    expect((results[3] as { path: string }).path).toMatch(/^\/m\/s-\d{10}$/);
    await client.multi([{ type: 'delete', path: (results[3] as { path: string }).path }]);
  });

  it('applies nothing of a multi whose op fails, and names the op', async () => {
    await client.create('/mf', Buffer.from('0'));
    const failure = await client
      .multi([
        { type: 'set', path: '/mf', data: Buffer.from('x') },
        { type: 'create', path: '/mf/new' },
        { type: 'check', path: '/mf', version: 7 },
      ])
      .then(() => null, (e: unknown) => e);
    expect(failure).toBeInstanceOf(ZooKeeperMultiError);
    const err = failure as ZooKeeperMultiError;
    expect(err.failedOp).toBe(2);
    expect(err.error).toBeInstanceOf(ZooKeeperBadVersionError);
    expect(err.code).toBe('LL_ERR_ZK_BAD_VERSION');
    expect((await client.get('/mf')).data.toString()).toBe('0');
    expect((await client.exists('/mf/new')).stat).toBeNull();
  });

  it('checks version 0 in a multi instead of matching any version', async () => {
    await client.create('/v0', Buffer.from('a'));
    await client.set('/v0', Buffer.from('b'));
    for (const op of [
      { type: 'check', path: '/v0', version: 0 },
      { type: 'set', path: '/v0', data: Buffer.from('c'), version: 0 },
      { type: 'delete', path: '/v0', version: 0 },
    ] as const) {
      const err = await client.multi([op]).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(ZooKeeperMultiError);
      expect((err as ZooKeeperMultiError).error).toBeInstanceOf(ZooKeeperBadVersionError);
    }
    expect((await client.get('/v0')).data.toString()).toBe('b');
    await client.multi([{ type: 'check', path: '/v0', version: 1 }, { type: 'delete', path: '/v0', version: 1 }]);
  });

  it('fires one-shot watches for data, existence and children', async () => {
    await client.create('/w', Buffer.from('0'));
    const data = await client.get('/w', { watch: true });
    const absent = await client.exists('/w/kid', { watch: true });
    const kids = await client.getChildren('/w', { watch: true });
    expect(absent.stat).toBeNull();
    await client.set('/w', Buffer.from('1'));
    expect(await data.changed).toEqual({ type: 'dataChanged', path: '/w' });
    await client.create('/w/kid');
    expect(await absent.changed).toEqual({ type: 'created', path: '/w/kid' });
    expect(await kids.changed).toEqual({ type: 'childrenChanged', path: '/w' });
    const gone = await client.exists('/w/kid', { watch: true });
    await client.delete('/w/kid');
    expect(await gone.changed).toEqual({ type: 'deleted', path: '/w/kid' });
  });

  it('keeps paths under the chroot, and deletes a closed session ephemerals', async () => {
    const other = await ZooKeeperClient.connect({ connect: zk.connectString, sessionTimeoutMs: 4_000 });
    try {
      const eph = await ZooKeeperClient.connect({ connect: `${zk.connectString}/client-test`, sessionTimeoutMs: 4_000 });
      await eph.create('/eph', Buffer.from('x'), 'ephemeral');
      const seen = await other.exists('/client-test/eph', { watch: true });
      expect(seen.stat?.ephemeralOwner).toBe(eph.sessionId);
      await eph.close();
      expect(await seen.changed).toEqual({ type: 'deleted', path: '/client-test/eph' });
      await expect(eph.get('/eph')).rejects.toMatchObject({ code: 'LL_ERR_ZK_CLOSED' });
    } finally {
      await other.close();
    }
  });

  it('reports an expired session to its user: event, ended watches, ephemerals gone, requests refused', async () => {
    const relay = await StallingRelay.start(zk.port);
    const observer = await ZooKeeperClient.connect({ connect: zk.connectString, sessionTimeoutMs: 4_000 });
    try {
      const victim = await ZooKeeperClient.connect({ connect: `127.0.0.1:${relay.port}/client-test`, sessionTimeoutMs: 1_500 });
      expect(victim.negotiatedSessionTimeoutMs).toBeLessThanOrEqual(1_500);
      let expired = false;
      victim.on('expired', () => (expired = true));
      await victim.create('/victim', Buffer.alloc(0), 'ephemeral');
      const pending = await victim.exists('/never', { watch: true });
      const ephemeral = await observer.exists('/client-test/victim', { watch: true });
      relay.stall();
      // The server expires the session: its ephemeral goes while the victim hears nothing.
      expect(await ephemeral.changed).toEqual({ type: 'deleted', path: '/client-test/victim' });
      relay.resume();
      await until(() => expired, 'the expired event');
      expect(victim.expired).toBe(true);
      expect((await pending.changed).type).toBe('sessionExpired');
      await expect(victim.get('/victim')).rejects.toBeInstanceOf(ZooKeeperSessionExpiredError);
      await victim.close();
    } finally {
      await observer.close();
      await relay.close();
    }
  }, 30_000);

  it('rejects a connect that gets no session within its timeout', async () => {
    const relay = await StallingRelay.start(zk.port);
    relay.stall();
    try {
      await expect(ZooKeeperClient.connect({ connect: `127.0.0.1:${relay.port}`, sessionTimeoutMs: 1_000, connectTimeoutMs: 1_000 })).rejects.toMatchObject({
        code: 'LL_ERR_ZK_CONNECTION_LOSS',
      });
    } finally {
      await relay.close();
    }
  });
});
