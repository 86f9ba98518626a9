/**
 * ZooKeeperMetadataStore beyond the contract suite: several store instances, each on its own ZooKeeper
 * session, sharing one store (as brokers do), key names ZooKeeper would refuse as znode names, and values at
 * the size limits. One real ZooKeeper for the file (test/unit/metadata/support.ts), a fresh chroot per test.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ManualClock, compareKeys, systemClock, type Clock, type MetadataError, type MetadataStore } from '../../../src/metadata/index.js';
import { ZooKeeperMetadataStore, type ZooKeeperMetadataStoreOptions } from '../../../src/metadata/zookeeper/index.js';
import { ZooKeeperClient } from '../../../src/zookeeper/client.js';
import { StallingRelay } from '../../support/stalling-relay.js';
import { ZK_OP, ZooKeeperCuttingRelay, type ZooKeeperRequest } from '../../support/zookeeper-cutting-relay.js';
import { Recorder, bytes, sharedZooKeeper, until, zooKeeperAvailable } from './support.js';

let chroots = 0;

async function rejection(promise: Promise<unknown>): Promise<MetadataError> {
  try {
    await promise;
  } catch (err) {
    return err as MetadataError;
  }
  throw new Error('expected the promise to reject');
}

describe.skipIf(!zooKeeperAvailable)('ZooKeeperMetadataStore shared by several instances', () => {
  let connect: string;
  const open: MetadataStore[] = [];
  const openStore = async (options: Partial<ZooKeeperMetadataStoreOptions> = {}): Promise<ZooKeeperMetadataStore> => {
    const store = await ZooKeeperMetadataStore.open({ connect, sessionTimeoutMs: 10_000, ...options });
    open.push(store);
    return store;
  };

  beforeEach(async () => {
    const zk = await sharedZooKeeper();
    connect = `${zk.connectString}/ll-shared-${process.pid}-${++chroots}`;
  });

  afterEach(async () => {
    for (const store of open.splice(0)) await store.close();
  });

  it('shows each instance the writes of the others, and streams them to watches on another session', async () => {
    const a = await openStore();
    const b = await openStore();
    const rec = new Recorder();
    await b.watch({ prefix: '/t/' }, rec, { prevKv: true });
    const first = await a.put('/t/x', bytes('1'));
    await a.put('/t/x', bytes('2'));
    expect(await b.get('/t/x')).toMatchObject({ value: bytes('2'), version: 2, createRevision: first.revision });
    await rec.waitForEvents(2, 10_000);
    expect(rec.summary).toEqual(['put /t/x=1@2', 'put /t/x=2@3']);
    expect(rec.events[1]!.prevKv).toMatchObject({ value: bytes('1'), version: 1 });
    expect(await b.revision()).toBe(3);
  });

  it('lets exactly one of two instances win a compare-and-set race', async () => {
    const a = await openStore();
    const b = await openStore();
    const { revision } = await a.put('/owner', bytes('none'));
    for (let round = 0; round < 10; round++) {
      const current = (await a.get('/owner'))!.modRevision;
      const results = await Promise.all([
        a.compareAndSet('/owner', { modRevision: current }, bytes(`a${round}`)),
        b.compareAndSet('/owner', { modRevision: current }, bytes(`b${round}`)),
      ]);
      expect(results.filter((r) => r.succeeded)).toHaveLength(1);
    }
    expect(await a.revision()).toBe(revision + 10);
  });

  it('gives concurrent writers of two instances one revision each, with no gap, in one order for every watcher', async () => {
    const a = await openStore();
    const b = await openStore();
    const observer = await openStore();
    const rec = new Recorder();
    await observer.watch({ prefix: '/c/' }, rec);
    const writes = await Promise.all([
      ...Array.from({ length: 40 }, (_, i) => a.put(`/c/a${i}`, bytes(String(i)))),
      ...Array.from({ length: 40 }, (_, i) => b.put(`/c/b${i}`, bytes(String(i)))),
    ]);
    const revisions = writes.map((w) => w.revision).sort((x, y) => x - y);
    expect(revisions).toEqual(Array.from({ length: 80 }, (_, i) => i + 2));
    await rec.waitForEvents(80, 20_000);
    expect(rec.events.map((e) => e.kv.modRevision)).toEqual(revisions);
    expect((await b.list('/c/')).kvs).toHaveLength(80);
  }, 60_000);

  it('replays on one instance the history another instance wrote before it opened', async () => {
    const a = await openStore();
    await a.put('/h/1', bytes('a'));
    await a.put('/h/1', bytes('b'));
    await a.delete('/h/1');
    const b = await openStore();
    const rec = new Recorder();
    await b.watch({ key: '/h/1' }, rec, { startRevision: 2, prevKv: true });
    await rec.waitForEvents(3);
    expect(rec.summary).toEqual(['put /h/1=a@2', 'put /h/1=b@3', 'delete /h/1@4']);
    expect(rec.events[2]!.prevKv).toMatchObject({ value: bytes('b'), modRevision: 3 });
  });

  it('lets another instance expire a lease its holder stopped keeping alive, its keys gone in one revision', async () => {
    const holderClock = new ManualClock();
    const otherClock = new ManualClock();
    const holder = await openStore({ clock: holderClock });
    const other = await openStore({ clock: otherClock });
    const lease = await holder.grantLease(10);
    await holder.put('/broker/1', bytes('x'), { lease: lease.id });
    await holder.put('/owns/p0', bytes('1'), { lease: lease.id });
    const rec = new Recorder();
    await other.watch({ prefix: '/' }, rec);
    // The other instance learns of the lease when it meets it: a full TTL from then.
    expect((await other.leaseTimeToLive(lease.id))?.keys).toEqual(['/broker/1', '/owns/p0']);
    await holder.close();
    otherClock.advance(10_000);
    await rec.waitForEvents(2, 10_000);
    expect(rec.summary).toEqual(['delete /broker/1@4', 'delete /owns/p0@4']);
    expect(rec.responses).toHaveLength(1);
    expect(await other.leaseTimeToLive(lease.id)).toBeNull();
  });

  it('expires a lease granted on another instance after it opened, having only followed the writes under it', async () => {
    // A broker killed with SIGKILL: its lease was granted after the surviving broker's store opened, and the
    // survivor never asked about it; it learned of it from the keys put under it, and ends it one TTL later.
    const holderClock = new ManualClock();
    const otherClock = new ManualClock();
    const other = await openStore({ clock: otherClock });
    const holder = await openStore({ clock: holderClock });
    const rec = new Recorder();
    await other.watch({ prefix: '/' }, rec);
    const lease = await holder.grantLease(5);
    await holder.put('/brokers/ids/2', bytes('x'), { lease: lease.id });
    await rec.waitForEvents(1, 10_000);
    await holder.close();
    // The survivor reads the lease's znode after it delivers the put, and gives the lease a full TTL from then:
    // the clock goes on in steps until the lease ends, so the test does not race that read.
    const deadline = Date.now() + 10_000;
    while (rec.events.length < 2 && Date.now() < deadline) {
      otherClock.advance(1_000);
      await new Promise((r) => setTimeout(r, 20));
    }
    await rec.waitForEvents(2, 10_000);
    expect(rec.summary).toEqual(['put /brokers/ids/2=x@2', 'delete /brokers/ids/2@3']);
    expect(await other.get('/brokers/ids/2')).toBeNull();
  });

  it('does not expire a lease its holder keeps alive on another instance', async () => {
    const holderClock = new ManualClock();
    const otherClock = new ManualClock();
    const holder = await openStore({ clock: holderClock });
    const other = await openStore({ clock: otherClock });
    const lease = await holder.grantLease(10);
    await holder.put('/alive', bytes('x'), { lease: lease.id });
    expect(await other.leaseTimeToLive(lease.id)).toMatchObject({ ttl: 10 });
    for (let i = 0; i < 3; i++) {
      holderClock.advance(6_000);
      await holder.keepAliveLease(lease.id);
      otherClock.advance(6_000);
      // Past the other instance's deadline it sees the keep-alive (the lease znode's version moved) and waits on.
      expect(await other.get('/alive')).not.toBeNull();
    }
    // Its deadline passes again: it sees the last keep-alive and gives a full TTL from now (so a lease ends at
    // most two TTLs after the last keep-alive an instance could see) …
    otherClock.advance(20_000);
    expect(await other.get('/alive')).not.toBeNull();
    // … and with no keep-alive since, it ends the lease.
    otherClock.advance(10_000);
    expect(await other.get('/alive')).toBeNull();
    expect((await rejection(holder.keepAliveLease(lease.id))).code).toBe('LL_ERR_METADATA_LEASE_NOT_FOUND');
  });

  it('refuses a put on another instance with a lease that instance revoked', async () => {
    const a = await openStore();
    const b = await openStore();
    const lease = await a.grantLease(60);
    await b.revokeLease(lease.id);
    expect((await rejection(a.put('/x', bytes('1'), { lease: lease.id }))).code).toBe('LL_ERR_METADATA_LEASE_NOT_FOUND');
    expect(await a.get('/x')).toBeNull();
  });

  it('commits writes called one after another in one multi, each at its own revision in call order, seen so by a watch on another instance', async () => {
    const a = await openStore();
    const observer = await openStore();
    const rec = new Recorder();
    await observer.watch({ prefix: '/g/' }, rec, { prevKv: true });
    const head = await a.put('/g/owner', bytes('none'));
    const multis = vi.spyOn(ZooKeeperClient.prototype, 'multi');
    try {
      const results = await Promise.all([
        ...Array.from({ length: 40 }, (_, i) => a.put(`/g/p${i}`, bytes(String(i)))),
        a.compareAndSet('/g/owner', { modRevision: head.revision }, bytes('a')),
        // Evaluated after the one above, in the same group: its expectation no longer holds.
        a.compareAndSet('/g/owner', { modRevision: head.revision }, bytes('b')),
        a.delete('/g/p0'),
      ]);
      expect(multis).toHaveBeenCalledTimes(1);
      const revisions = results.map((r) => r.revision);
      expect(revisions.slice(0, 41)).toEqual(Array.from({ length: 41 }, (_, i) => head.revision + 1 + i));
      expect(results[41]).toMatchObject({ succeeded: false, revision: head.revision + 41, current: { value: bytes('a') } });
      expect(results[42]).toMatchObject({ succeeded: true, deleted: 1, revision: head.revision + 42 });
    } finally {
      multis.mockRestore();
    }
    await rec.waitForEvents(43, 10_000);
    expect(rec.summary.slice(1)).toEqual([...Array.from({ length: 40 }, (_, i) => `put /g/p${i}=${i}@${head.revision + 1 + i}`), `put /g/owner=a@${head.revision + 41}`, `delete /g/p0@${head.revision + 42}`]);
    const reopened = await openStore();
    expect(await reopened.get('/g/p0')).toBeNull();
    expect(await reopened.get('/g/owner')).toMatchObject({ value: bytes('a'), modRevision: head.revision + 41 });
    expect(await reopened.revision()).toBe(head.revision + 42);
  });

  it('lets a read called between two writes see the first and not the second', async () => {
    const store = await openStore();
    const first = store.put('/o/k', bytes('1'));
    const read = store.get('/o/k');
    const second = store.put('/o/k', bytes('2'));
    const [w1, r, w2] = await Promise.all([first, read, second]);
    expect(r).toMatchObject({ value: bytes('1'), modRevision: w1.revision });
    expect(w2.revision).toBe(w1.revision + 1);
  });

  it('fails only the write of a group whose lease is gone, and splits a group that would pass jute.maxbuffer into several multis', async () => {
    const a = await openStore({ juteMaxBuffer: 16 * 1024 });
    const b = await openStore();
    const lease = await a.grantLease(60);
    await b.revokeLease(lease.id); // a still believes in it: its multi's lease check fails
    const head = await a.revision();
    const value = Buffer.alloc(3000, 1);
    const multis = vi.spyOn(ZooKeeperClient.prototype, 'multi');
    let settled: PromiseSettledResult<{ revision: number }>[];
    try {
      settled = await Promise.allSettled([
        a.put('/l/before', bytes('x')),
        a.put('/l/leased', bytes('x'), { lease: lease.id }),
        // Each about 6 KB in its multi (the value in its znode and in its history): two fit in 16 KiB.
        ...Array.from({ length: 6 }, (_, i) => a.put(`/l/big${i}`, value)),
      ]);
      expect(multis.mock.calls.length).toBeGreaterThanOrEqual(4);
    } finally {
      multis.mockRestore();
    }
    expect(settled[1]).toMatchObject({ status: 'rejected', reason: { code: 'LL_ERR_METADATA_LEASE_NOT_FOUND' } });
    const ok = settled.filter((x): x is PromiseFulfilledResult<{ revision: number }> => x.status === 'fulfilled').map((x) => x.value.revision);
    expect(ok).toEqual(Array.from({ length: 7 }, (_, i) => head + 1 + i));
    expect(await b.get('/l/leased')).toBeNull();
    for (let i = 0; i < 6; i++) expect((await b.get(`/l/big${i}`))?.value.equals(value)).toBe(true);
  });

  it('stores keys ZooKeeper refuses as znode names, and lists them in UTF-8 byte order', async () => {
    const store = await openStore();
    const keys = ['/a/b', '.', '..', '/./..', 'zookeeper', '%41', 'A', '/\u0001ctl', '/\u007f', '/\ue000private', '/\ufff5', '/😀', '/\uffff', '/ü', ' '];
    for (const key of keys) await store.put(key, bytes(key));
    const listed = (await store.list('')).kvs.map((kv) => kv.key);
    expect(listed).toEqual([...keys].sort(compareKeys));
    for (const key of keys) expect((await store.get(key))?.value.toString()).toBe(key);
    const reopened = await openStore();
    expect((await reopened.list('')).kvs.map((kv) => kv.key)).toEqual(listed);
    expect((await reopened.list('/', { limit: 3, startAfter: '/\u007f' })).kvs.map((kv) => kv.key)).toEqual(
      listed.filter((k) => k.startsWith('/') && compareKeys(k, '/\u007f') > 0).slice(0, 3),
    );
  });

  it('takes values up to its request limit and refuses larger ones, and a txn whose multi would pass jute.maxbuffer', async () => {
    const store = await openStore();
    const big = Buffer.alloc(480 * 1024 - 10, 7);
    await store.put('/big', big);
    expect((await store.get('/big'))?.value.equals(big)).toBe(true);
    expect((await rejection(store.put('/bigger', Buffer.alloc(480 * 1024)))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
    const wide = await openStore({ maxRequestBytes: 4 * 1024 * 1024 });
    const refused = await rejection(wide.put('/huge', Buffer.alloc(700 * 1024)));
    expect(refused.code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
    expect(refused.message).toMatch(/jute\.maxbuffer/);
    expect(await store.get('/huge')).toBeNull();
  });

  it('refuses a second exclusive opener but lets shared instances in', async () => {
    await openStore({ exclusive: true });
    expect((await rejection(ZooKeeperMetadataStore.open({ connect, exclusive: true }))).code).toBe('LL_ERR_METADATA_LOCKED');
    const shared = await openStore();
    expect(await shared.revision()).toBe(1);
  });

  it('goes on after its ZooKeeper session expires: a new session, and its watches get what was written meanwhile', async () => {
    const zk = await sharedZooKeeper();
    const relay = await StallingRelay.start(zk.port);
    const relays = [relay];
    const clients: ZooKeeperClient[] = [];
    const chroot = connect.slice(connect.indexOf('/'));
    try {
      const writer = await openStore();
      const errors: Error[] = [];
      const cut = await openStore({ connect: `127.0.0.1:${relay.port}${chroot}`, sessionTimeoutMs: 1_500, onBackgroundError: (e) => errors.push(e) });
      const rec = new Recorder();
      await cut.watch({ prefix: '/s/' }, rec);
      await writer.put('/s/before', bytes('1'));
      await rec.waitForEvents(1, 10_000);
      // A witness session with the same timeout, stalled just after the store's: once the server has expired
      // it (its ephemeral goes), it has expired the store's session, whose last sign of life was earlier.
      const witnessRelay = await StallingRelay.start(zk.port);
      relays.push(witnessRelay);
      const witness = await ZooKeeperClient.connect({ connect: `127.0.0.1:${witnessRelay.port}${chroot}`, sessionTimeoutMs: 1_500 });
      clients.push(witness);
      await witness.create('/witness', Buffer.alloc(0), 'ephemeral');
      const observer = await ZooKeeperClient.connect({ connect: zk.connectString + chroot });
      clients.push(observer);
      const gone = (await observer.exists('/witness', { watch: true })).changed;
      relay.stall();
      witnessRelay.stall();
      await writer.put('/s/during', bytes('2'));
      expect(await gone).toEqual({ type: 'deleted', path: '/witness' });
      relay.resume();
      await rec.waitForEvents(2, 20_000);
      expect(rec.summary).toEqual(['put /s/before=1@2', 'put /s/during=2@3']);
      await until(() => rec.errors.length === 0, 'no watch error');
      expect((await cut.put('/s/after', bytes('3'))).revision).toBe(4);
      expect((await writer.get('/s/after'))?.value.toString()).toBe('3');
      await rec.waitForEvents(3, 10_000);
    } finally {
      for (const store of open.splice(0)) await store.close();
      for (const c of clients) await c.close();
      for (const r of relays) await r.close();
    }
  }, 60_000);

  it('arms its /rev watch again when the call that arms it fails, and streams every later change', async () => {
    const zk = await sharedZooKeeper();
    const relay = await ZooKeeperCuttingRelay.start(zk.port);
    const chroot = connect.slice(connect.indexOf('/'));
    try {
      const writer = await openStore();
      const errors: Error[] = [];
      const follower = await openStore({ connect: `127.0.0.1:${relay.port}${chroot}`, onBackgroundError: (e) => errors.push(e) });
      const rec = new Recorder();
      await follower.watch({ prefix: '/w/' }, rec);
      await writer.put('/w/1', bytes('1'));
      await rec.waitForEvents(1, 10_000);
      // The write below fires the follower's watch; each of its calls to arm it again (the first and the
      // client's three retries after ConnectionLoss) loses its connection before ZooKeeper sees it.
      const armsWatch = (r: ZooKeeperRequest): boolean => r.type === ZK_OP.exists && r.watch === true && r.path === `${chroot}/rev`;
      relay.cutOn(armsWatch, 4);
      await writer.put('/w/2', bytes('2'));
      await until(() => relay.cuts === 4 && errors.some((e) => /follow/.test(e.message)), 'the arming call to fail', 20_000);
      // Nothing the follower calls itself: only its watch can bring it this change.
      await writer.put('/w/3', bytes('3'));
      await rec.waitForEvents(3, 10_000);
      expect(rec.summary).toEqual(['put /w/1=1@2', 'put /w/2=2@3', 'put /w/3=3@4']);
      expect(rec.errors).toEqual([]);
    } finally {
      for (const store of open.splice(0)) await store.close();
      await relay.close();
    }
  }, 60_000);

  it('goes on trying to end an overdue lease while ZooKeeper fails the attempts, with no other call to prompt it', async () => {
    const zk = await sharedZooKeeper();
    const relay = await ZooKeeperCuttingRelay.start(zk.port);
    const chroot = connect.slice(connect.indexOf('/'));
    const observer = await ZooKeeperClient.connect({ connect: zk.connectString + chroot });
    try {
      const errors: Error[] = [];
      const holder = await openStore({ connect: `127.0.0.1:${relay.port}${chroot}`, onBackgroundError: (e) => errors.push(e) });
      // Ending a lease starts by looking at its znode: the first two attempts (each the call and the client's
      // three retries after ConnectionLoss) lose their connection before ZooKeeper sees them. Set before the
      // lease is granted, so that its expiry cannot come first.
      relay.cutOn((r) => r.type === ZK_OP.exists && r.watch === false && r.path!.startsWith(`${chroot}/leases/`), 8);
      const { id } = await holder.grantLease(1);
      await holder.put('/l/k', bytes('v'), { lease: id });
      const leasePath = `/leases/lease-${String(Number(id) - 1).padStart(10, '0')}`;
      const { stat, changed } = await observer.exists(leasePath, { watch: true });
      expect(stat).not.toBeNull();
      await until(() => relay.cuts === 8, 'two failed attempts to end the lease', 20_000);
      const deadline = new Promise<string>((resolve) => setTimeout(resolve, 15_000, 'the lease is still there').unref());
      expect(await Promise.race([changed, deadline])).toEqual({ type: 'deleted', path: leasePath });
      expect(await holder.get('/l/k')).toBeNull();
      expect(errors.map((e) => e.message.replace(/: .*/, ''))).toEqual(['metadata storage failed during expireLease', 'metadata storage failed during expireLease']);
    } finally {
      for (const store of open.splice(0)) await store.close();
      await observer.close();
      await relay.close();
    }
  }, 60_000);

  it('ends a lease whose timer fires a little before its deadline by the store\'s clock', async () => {
    // Node's timers and Date.now() can differ by a millisecond. This clock fires the lease's first timer 200 ms
    // early (more than a loaded machine delays it), and every later one on time.
    let firedEarly = false;
    const early: Clock = {
      now: () => Date.now(),
      setTimer(delayMs, callback) {
        const shorten = !firedEarly && delayMs >= 500;
        firedEarly ||= shorten;
        return systemClock.setTimer(shorten ? delayMs - 200 : delayMs, callback);
      },
    };
    const zk = await sharedZooKeeper();
    const observer = await ZooKeeperClient.connect({ connect: zk.connectString + connect.slice(connect.indexOf('/')) });
    try {
      const holder = await openStore({ clock: early });
      const { id } = await holder.grantLease(1);
      await holder.put('/l/k', bytes('v'), { lease: id });
      const leasePath = `/leases/lease-${String(Number(id) - 1).padStart(10, '0')}`;
      const { stat, changed } = await observer.exists(leasePath, { watch: true });
      expect(stat).not.toBeNull();
      const deadline = new Promise<string>((resolve) => setTimeout(resolve, 10_000, 'the lease is still there').unref());
      expect(await Promise.race([changed, deadline])).toEqual({ type: 'deleted', path: leasePath });
      expect(await holder.get('/l/k')).toBeNull();
    } finally {
      await observer.close();
    }
  }, 30_000);

  it('refuses a znode that is not one of its own with a format error instead of reading garbage', async () => {
    const store = await openStore();
    await store.put('/k', bytes('v'));
    const zk = await ZooKeeperClient.connect({ connect });
    try {
      const { children } = await zk.getChildren('/kv');
      await zk.set(`/kv/${children[0]}`, Buffer.from('not a header'));
    } finally {
      await zk.close();
    }
    expect((await rejection(ZooKeeperMetadataStore.open({ connect }))).code).toBe('LL_ERR_METADATA_FORMAT');
  });
});
