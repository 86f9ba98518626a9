/**
 * A stored row as the store answers it (a `KeyValue`, copied when it leaves the store for a listener), and
 * the compares etcd evaluates against a row: `Expectation` (compareAndSet, conditional delete) and a txn's
 * `Compare` (etcd's compareKV).
 */

import type { StoredKv } from './backend.js';
import type { Compare, Expectation, KeyValue } from './types.js';

export function toKeyValue(kv: StoredKv, copy = false): KeyValue {
  return {
    key: kv.key,
    value: copy ? Buffer.from(kv.value) : kv.value,
    createRevision: kv.createRevision,
    modRevision: kv.modRevision,
    version: kv.version,
    lease: kv.lease === 0 ? null : String(kv.lease),
  };
}

export function maybeKeyValue(kv: StoredKv | null | undefined, copy = false): KeyValue | null {
  return kv === null || kv === undefined ? null : toKeyValue(kv, copy);
}

export function meets(expect: Expectation, kv: StoredKv | undefined): boolean {
  return 'modRevision' in expect ? (kv?.modRevision ?? 0) === expect.modRevision : (kv?.version ?? 0) === expect.version;
}

/** etcd's compareKV, including "a value compare on a missing key is false". */
export function compareHolds(c: Compare, kv: StoredKv | undefined): boolean {
  let order: number;
  switch (c.target) {
    case 'value':
      if (kv === undefined) return false;
      order = Buffer.compare(kv.value, c.value);
      break;
    case 'lease': {
      const have = BigInt(kv?.lease ?? 0);
      const want = c.value === null ? 0n : BigInt(c.value);
      order = have === want ? 0 : have < want ? -1 : 1;
      break;
    }
    case 'version':
      order = Math.sign((kv?.version ?? 0) - c.value);
      break;
    case 'createRevision':
      order = Math.sign((kv?.createRevision ?? 0) - c.value);
      break;
    case 'modRevision':
      order = Math.sign((kv?.modRevision ?? 0) - c.value);
      break;
  }
  switch (c.op) {
    case '==':
      return order === 0;
    case '!=':
      return order !== 0;
    case '<':
      return order < 0;
    case '>':
      return order > 0;
  }
}

