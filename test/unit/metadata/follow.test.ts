/**
 * follow(): the first read and the changes after it, a read of several pages that is not one snapshot, and
 * following again after the watch ends, a read fails or the listener throws. On a real in-memory store; the
 * faults come from a wrapper that can end its watches and fail its reads.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { follow, OwnWrites, type FollowListener, type Following } from '../../../src/metadata/follow.js';
import {
  ManualClock,
  MemoryMetadataVolume,
  MetadataCompactedError,
  MetadataStorageError,
  openMemoryMetadataStore,
  type KeyValue,
  type MetadataStore,
  type WatchTarget,
} from '../../../src/metadata/index.js';
import { bytes, FaultyStore, laggingPair, until, zooKeeperAvailable } from './support.js';

/** The listener's view: the keys it holds, and what it was told. */
class Mirror implements FollowListener {
  readonly state = new Map<string, string>();
  readonly log: string[] = [];
  readonly errors: Error[] = [];
  throwOnChange = false;
  reset(kvs: readonly KeyValue[], revision: number): void {
    this.state.clear();
    for (const kv of kvs) this.state.set(kv.key, kv.value.toString());
    this.log.push(`reset@${revision} ${kvs.map((kv) => kv.key).join(',')}`);
  }
  changes(events: Parameters<FollowListener['changes']>[0]): void {
    if (this.throwOnChange) {
      this.throwOnChange = false;
      throw new Error('the listener failed');
    }
    for (const e of events) {
      if (e.type === 'put') this.state.set(e.kv.key, e.kv.value.toString());
      else this.state.delete(e.kv.key);
      this.log.push(`${e.type} ${e.kv.key}@${e.kv.modRevision}`);
    }
  }
  error(err: Error): void {
    this.errors.push(err);
  }
  get sorted(): [string, string][] {
    return [...this.state].sort(([a], [b]) => (a < b ? -1 : 1));
  }
}

describe('follow', () => {
  const open: { store: MetadataStore; following: Following | null }[] = [];
  const setup = async (): Promise<{ store: MetadataStore; faulty: FaultyStore; mirror: Mirror }> => {
    const store = await openMemoryMetadataStore(new MemoryMetadataVolume('follow'));
    open.push({ store, following: null });
    return { store, faulty: new FaultyStore(store), mirror: new Mirror() };
  };
  const start = async (faulty: FaultyStore, mirror: Mirror, target: WatchTarget = { prefix: '/p/' }, clock?: ManualClock, pageSize?: number): Promise<Following> => {
    const following = await follow(faulty, target, mirror, { retryMs: 1_000, ...(clock ? { clock } : {}), ...(pageSize ? { pageSize } : {}) });
    open.at(-1)!.following = following;
    return following;
  };

  afterEach(async () => {
    for (const { store, following } of open.splice(0)) {
      await following?.cancel();
      await store.close();
    }
  });

  it('gives what the prefix holds, then each change under it and none elsewhere', async () => {
    const { store, faulty, mirror } = await setup();
    await store.put('/p/a', bytes('1'));
    await store.put('/q/x', bytes('1'));
    await start(faulty, mirror);
    expect(mirror.log).toEqual(['reset@3 /p/a']);
    await store.put('/p/b', bytes('2'));
    await store.delete('/p/a');
    await store.put('/q/y', bytes('2'));
    await until(() => mirror.log.length === 3, 'two changes');
    expect(mirror.log.slice(1)).toEqual(['put /p/b@4', 'delete /p/a@5']);
    expect(mirror.sorted).toEqual([['/p/b', '2']]);
  });

  it('follows one key, not the keys it prefixes', async () => {
    const { store, faulty, mirror } = await setup();
    await store.put('/k/x', bytes('other'));
    await store.put('/k', bytes('1'));
    await start(faulty, mirror, { key: '/k' });
    expect(mirror.sorted).toEqual([['/k', '1']]);
    await store.put('/k/y', bytes('other'));
    await store.put('/k', bytes('2'));
    await until(() => mirror.state.get('/k') === '2', 'the change of /k');
    expect(mirror.sorted).toEqual([['/k', '2']]);
  });

  it('ends every key at its latest state when the keys change between the pages of a read, each change applied once', async () => {
    const { store, faulty, mirror } = await setup();
    for (const k of ['a', 'b', 'c', 'd']) await store.put(`/p/${k}`, bytes('old'));
    let once = true;
    faulty.beforeLaterPage = async () => {
      if (!once) return;
      once = false;
      await store.put('/p/a', bytes('new')); // on the page already read: only the watch brings it
      await store.put('/p/d', bytes('new')); // on a page still to read: the read brings it, the watch must not again
      await store.delete('/p/b'); // read already: gone only through the watch
      await store.put('/p/e', bytes('new')); // new, on a page still to read
    };
    await start(faulty, mirror, { prefix: '/p/' }, undefined, 2);
    await until(() => mirror.state.get('/p/a') === 'new' && !mirror.state.has('/p/b'), 'the changes made during the read');
    expect(mirror.sorted).toEqual([
      ['/p/a', 'new'],
      ['/p/c', 'old'],
      ['/p/d', 'new'],
      ['/p/e', 'new'],
    ]);
    expect(mirror.log).toEqual(['reset@5 /p/a,/p/b,/p/c,/p/d,/p/e', 'put /p/a@6', 'delete /p/b@8']);
  });

  it('reads the prefix again when its watch ends, so what changed meanwhile arrives, deletions too', async () => {
    const { store, faulty, mirror } = await setup();
    await store.put('/p/a', bytes('1'));
    await store.put('/p/b', bytes('1'));
    // The follower's clock holds the read again until the changes below are made.
    const clock = new ManualClock();
    await start(faulty, mirror, { prefix: '/p/' }, clock);
    faulty.endWatch(new MetadataCompactedError(3, 10));
    await store.delete('/p/a');
    await store.put('/p/c', bytes('1'));
    clock.advance(0);
    await until(() => mirror.log.length === 2, 'the read again');
    expect(mirror.errors.map((e) => e.message)).toEqual([new MetadataCompactedError(3, 10).message]);
    expect(mirror.sorted).toEqual([
      ['/p/b', '1'],
      ['/p/c', '1'],
    ]);
    await store.put('/p/d', bytes('1'));
    await until(() => mirror.state.has('/p/d'), 'a change after the read again');
    expect(mirror.log).toEqual(['reset@3 /p/a,/p/b', 'reset@5 /p/b,/p/c', 'put /p/d@6']);
  });

  it('tries a failed read again after the retry pause, for as long as it fails', async () => {
    const { store, faulty, mirror } = await setup();
    const clock = new ManualClock();
    await store.put('/p/a', bytes('1'));
    await start(faulty, mirror, { prefix: '/p/' }, clock);
    faulty.failReads = 3;
    faulty.endWatch(new Error('the watch ended'));
    clock.advance(0);
    await until(() => mirror.errors.length === 2, 'the first read to fail');
    for (let failed = 2; failed < 4; failed++) {
      clock.advance(999);
      expect(mirror.errors).toHaveLength(failed);
      clock.advance(1);
      await until(() => mirror.errors.length === failed + 1, `read ${failed} to fail`);
    }
    await store.put('/p/b', bytes('1'));
    clock.advance(1_000);
    await until(() => mirror.log.length === 2, 'the read that goes through');
    expect(mirror.sorted).toEqual([
      ['/p/a', '1'],
      ['/p/b', '1'],
    ]);
    expect(mirror.errors.map((e) => e.message)).toEqual(['the watch ended', ...Array<string>(3).fill(new MetadataStorageError('list', new Error('connection loss')).message)]);
  });

  it('reads again at once after a setback, and no sooner than the retry pause after one that follows it', async () => {
    const { faulty, mirror } = await setup();
    const clock = new ManualClock();
    await start(faulty, mirror, { prefix: '/p/' }, clock);
    faulty.endWatch(new Error('ended once'));
    clock.advance(0);
    await until(() => faulty.reads === 2 && faulty.watches.length === 2, 'the read again');
    faulty.endWatch(new Error('ended again'));
    clock.advance(999);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(faulty.reads).toBe(2);
    clock.advance(1);
    await until(() => faulty.reads === 3 && faulty.watches.length === 3, 'the read after the pause');
    // A second after the last setback: at once again.
    faulty.endWatch(new Error('ended a while later'));
    clock.advance(0);
    await until(() => faulty.reads === 4, 'the read at once after a quiet second');
    expect(mirror.errors.map((e) => e.message)).toEqual(['ended once', 'ended again', 'ended a while later']);
  });

  it('reads again when the listener throws on a change, and is not stopped by it', async () => {
    const { store, faulty, mirror } = await setup();
    await start(faulty, mirror);
    mirror.throwOnChange = true;
    await store.put('/p/a', bytes('1'));
    await until(() => mirror.log.length === 2, 'the read again');
    expect(mirror.errors.map((e) => e.message)).toEqual(['the listener failed']);
    expect(mirror.sorted).toEqual([['/p/a', '1']]);
    await store.put('/p/b', bytes('1'));
    await until(() => mirror.state.has('/p/b'), 'the next change');
  });

  it('delivers nothing after cancel, and reports nothing when the store closes', async () => {
    const { store, faulty, mirror } = await setup();
    const following = await start(faulty, mirror);
    await following.cancel();
    await store.put('/p/a', bytes('1'));
    const { store: other, faulty: faulty2, mirror: mirror2 } = await setup();
    await start(faulty2, mirror2);
    await other.close();
    await store.put('/p/b', bytes('1'));
    expect(await store.get('/p/b')).not.toBeNull();
    expect(mirror.log).toEqual(['reset@1 ']);
    expect(mirror2.errors).toEqual([]);
    expect(faulty2.reads).toBe(1);
  });
});

describe('OwnWrites', () => {
  it('holds each key\'s newest own write until the store is past it', () => {
    const own = new OwnWrites();
    own.wrote('a', 5);
    own.wrote('a', 4); // an older write answered late does not lower it
    own.wrote('b', 7);
    expect([own.after('a', 4), own.after('a', 5), own.after('b', 6), own.after('c', 0)]).toEqual([true, false, true, false]);
    own.settled(5);
    expect([own.after('a', 0), own.after('b', 6)]).toEqual([false, true]);
    own.settled(7);
    expect(own.after('b', 0)).toBe(false);
  });
});

describe.skipIf(!zooKeeperAvailable)('follow on ZooKeeper stores', () => {
  it('reads again when its store fell behind the history the others kept, and ends where they are', async () => {
    const pair = await laggingPair('follow');
    const { writer, lagging } = pair;
    let following: Following | null = null;
    try {
      await writer.put('/p/gone', bytes('1'));
      await writer.put('/p/kept', bytes('1'));
      const mirror = new Mirror();
      following = await follow(lagging, { prefix: '/p/' }, mirror);
      expect(mirror.sorted).toEqual([
        ['/p/gone', '1'],
        ['/p/kept', '1'],
      ]);
      // 20 revisions while the lagging store cannot read history; the stores keep 5.
      pair.cutHistoryReads();
      await writer.delete('/p/gone');
      for (let i = 0; i < 19; i++) await writer.put(`/p/n${i % 4}`, bytes(String(i)));
      pair.readHistoryAgain();
      await writer.put('/p/n0', bytes('last'));
      await until(() => mirror.log.some((l) => l.startsWith('reset@') && l !== mirror.log[0]), 'the read again', 20_000);
      expect(mirror.errors.map((e) => (e as MetadataCompactedError).code)).toEqual(['LL_ERR_METADATA_COMPACTED']);
      const expected = (await writer.list('/p/')).kvs.map((kv) => [kv.key, kv.value.toString()]);
      await until(() => JSON.stringify(mirror.sorted) === JSON.stringify(expected), 'the writer\'s state', 10_000);
      expect(mirror.sorted.map(([k]) => k)).toEqual(['/p/kept', '/p/n0', '/p/n1', '/p/n2', '/p/n3']);
      expect(mirror.state.get('/p/n0')).toBe('last');
      await writer.put('/p/after', bytes('1'));
      await until(() => mirror.state.get('/p/after') === '1', 'a later change', 10_000);
    } finally {
      await following?.cancel();
      await pair.close();
    }
  }, 60_000);
});
