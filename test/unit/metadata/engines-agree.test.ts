/**
 * Differential test: random sequences of operations give identical answers, final state and watch streams
 * on every engine. The contract suite pins the behaviour case by case; this explores the combinations
 * (byte order of non-ASCII keys, paging edges, txn branches, lease expiry interleaved with writes).
 */

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ManualClock, type Compare, type MetadataStore, type TxnOp } from '../../../src/metadata/index.js';
import { Recorder, bytes, engines } from './support.js';

const KEYS = ['/a', '/a/', '/a/b', '/a/b/c', '/ab', '/b', '/a\u0000', '/\u00e9', '/\u{E000}', '/\u{1F600}'];
const PREFIXES = ['', '/', '/a', '/a/', '/ab', '/\u00e9', '/\u{E000}', '/\u{1F600}'];

const key = fc.constantFrom(...KEYS);
const prefix = fc.constantFrom(...PREFIXES);
const nonEmptyPrefix = fc.constantFrom(...PREFIXES.filter((p) => p !== ''));
const value = fc.string({ maxLength: 3 });
const expectation = fc.oneof(
  fc.record({ modRevision: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ version: fc.integer({ min: 0, max: 3 }) }),
);
const compare: fc.Arbitrary<Compare> = fc.oneof(
  fc.record({
    key,
    target: fc.constantFrom('version' as const, 'createRevision' as const, 'modRevision' as const),
    op: fc.constantFrom('==' as const, '!=' as const, '<' as const, '>' as const),
    value: fc.integer({ min: 0, max: 25 }),
  }),
  fc.record({
    key,
    target: fc.constant('value' as const),
    op: fc.constantFrom('==' as const, '!=' as const, '<' as const, '>' as const),
    value: value.map(bytes),
  }),
);
const txnOp: fc.Arbitrary<TxnOp> = fc.oneof(
  fc.record({ type: fc.constant('get' as const), key }),
  fc.record({ type: fc.constant('list' as const), prefix }),
  fc.record({ type: fc.constant('put' as const), key, value: value.map(bytes) }),
  fc.record({ type: fc.constant('delete' as const), key, prevKv: fc.boolean() }),
  fc.record({ type: fc.constant('deletePrefix' as const), prefix: nonEmptyPrefix }),
);

type Step =
  | { op: 'put'; key: string; value: string; prevKv: boolean; lease: number | null }
  | { op: 'get'; key: string }
  | { op: 'list'; prefix: string; limit: number | undefined; startAfter: string | undefined }
  | { op: 'cas'; key: string; expect: { modRevision: number } | { version: number }; value: string }
  | { op: 'delete'; key: string; expect: { modRevision: number } | { version: number } | undefined }
  | { op: 'deletePrefix'; prefix: string }
  | { op: 'txn'; compare: Compare[]; success: TxnOp[]; failure: TxnOp[] }
  | { op: 'grant'; ttl: number }
  | { op: 'keepAlive'; lease: number }
  | { op: 'revoke'; lease: number }
  | { op: 'advance'; ms: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      op: fc.constant('put' as const),
      key,
      value,
      prevKv: fc.boolean(),
      lease: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat(2) }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('get' as const), key }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('list' as const),
      prefix,
      limit: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
      startAfter: fc.option(key, { nil: undefined }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('cas' as const), key, expect: expectation, value }) },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('delete' as const), key, expect: fc.option(expectation, { nil: undefined }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deletePrefix' as const), prefix: nonEmptyPrefix }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('txn' as const),
      compare: fc.array(compare, { maxLength: 2 }),
      success: fc.array(txnOp, { maxLength: 3 }),
      failure: fc.array(txnOp, { maxLength: 2 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('grant' as const), ttl: fc.integer({ min: 1, max: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('keepAlive' as const), lease: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('revoke' as const), lease: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 4_000 }) }) },
);

async function apply(store: MetadataStore, clock: ManualClock, leases: string[], s: Step): Promise<unknown> {
  const leaseId = (i: number) => leases[i] ?? '999';
  switch (s.op) {
    case 'put':
      return store.put(s.key, bytes(s.value), {
        prevKv: s.prevKv,
        ...(s.lease === null ? {} : { lease: leaseId(s.lease) }),
      });
    case 'get':
      return store.get(s.key);
    case 'list':
      return store.list(s.prefix, {
        ...(s.limit === undefined ? {} : { limit: s.limit }),
        ...(s.startAfter === undefined ? {} : { startAfter: s.startAfter }),
      });
    case 'cas':
      return store.compareAndSet(s.key, s.expect, bytes(s.value), { prevKv: true });
    case 'delete':
      return store.delete(s.key, { prevKv: true, ...(s.expect === undefined ? {} : { expect: s.expect }) });
    case 'deletePrefix':
      return store.deletePrefix(s.prefix);
    case 'txn':
      return store.txn({ compare: s.compare, success: s.success, failure: s.failure });
    case 'grant': {
      const grant = await store.grantLease(s.ttl);
      leases.push(grant.id);
      return grant;
    }
    case 'keepAlive':
      return store.keepAliveLease(leaseId(s.lease));
    case 'revoke':
      return store.revokeLease(leaseId(s.lease));
    case 'advance':
      clock.advance(s.ms);
      return store.revision();
  }
}

async function run(steps: Step[], engineIndex: number) {
  const instance = engines[engineIndex]!.create();
  const clock = new ManualClock();
  const store = await instance.open({ clock, historyRetention: 1_000 });
  const rec = new Recorder();
  await store.watch({ prefix: '' }, rec, { prevKv: true });
  const leases: string[] = [];
  const answers: unknown[] = [];
  try {
    for (const s of steps) {
      try {
        answers.push(await apply(store, clock, leases, s));
      } catch (err) {
        answers.push({ error: (err as { code?: string }).code ?? String(err) });
      }
    }
    const final = await store.list('');
    await new Promise<void>((resolve) => setImmediate(resolve));
    return { answers, final, events: rec.responses };
  } finally {
    await store.close();
    instance.dispose();
  }
}

describe('metadata engines', () => {
  it('agree on answers, final state and watch events for random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 10, maxLength: 40, size: 'max' }), async (steps) => {
        const results = [];
        for (let i = 0; i < engines.length; i++) results.push(await run(steps, i));
        for (const other of results.slice(1)) expect(other).toEqual(results[0]);
      }),
      { numRuns: 40 },
    );
  }, 30_000);
});
