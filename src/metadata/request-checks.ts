/**
 * Validation of what callers pass the embedded store, before anything is applied: values, limits, lease ids,
 * expectations, and a whole txn request (etcd's --max-txn-ops, duplicate keys in a branch, compare targets).
 * Failures are `MetadataInvalidArgumentError`s.
 */

import { MetadataInvalidArgumentError } from './errors.js';
import { checkKey, checkPrefix } from './key-order.js';
import type { Expectation, TxnRequest } from './types.js';

export function isNonNegativeInteger(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

export function checkValue(value: unknown, what = 'value'): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new MetadataInvalidArgumentError(`${what} must be a Buffer or Uint8Array`, { type: typeof value });
  }
}

export function checkLimit(limit: unknown): asserts limit is number | undefined {
  if (limit !== undefined && !(isNonNegativeInteger(limit) && limit > 0)) {
    throw new MetadataInvalidArgumentError('limit must be a positive integer', { limit });
  }
}

const LEASE_ID = /^[1-9][0-9]{0,18}$/;

/** The numeric id of a lease string; ids this store never hands out map to -1 (not found). */
export function parseLeaseId(id: unknown): number {
  if (typeof id !== 'string' || !LEASE_ID.test(id) || BigInt(id) > 0x7fffffffffffffffn) {
    throw new MetadataInvalidArgumentError('lease id must be a positive int64 in decimal', { lease: id });
  }
  const n = Number(id);
  return Number.isSafeInteger(n) ? n : -1;
}

export function checkExpectation(expect: unknown): asserts expect is Expectation {
  const e = expect as { modRevision?: unknown; version?: unknown } | null;
  const ok =
    typeof e === 'object' &&
    e !== null &&
    (('modRevision' in e && isNonNegativeInteger(e.modRevision) && !('version' in e)) ||
      ('version' in e && isNonNegativeInteger(e.version) && !('modRevision' in e)));
  if (!ok) {
    throw new MetadataInvalidArgumentError('expect must be { modRevision: n } or { version: n }, n >= 0', { expect });
  }
}

/**
 * Check a txn request against etcd's rules; returns the key and value bytes it carries (for the request size
 * limit, which the store checks).
 */
export function checkTxnRequest(request: TxnRequest, maxTxnOps: number): number {
  const compare = request.compare ?? [];
  const branches = [request.success ?? [], request.failure ?? []];
  if (!Array.isArray(compare) || !branches.every(Array.isArray)) {
    throw new MetadataInvalidArgumentError('txn compare, success and failure must be arrays');
  }
  for (const [what, list] of [
    ['compares', compare],
    ['success operations', branches[0]!],
    ['failure operations', branches[1]!],
  ] as const) {
    if (list.length > maxTxnOps) {
      throw new MetadataInvalidArgumentError(`txn has ${list.length} ${what}, over the ${maxTxnOps} limit`, {
        count: list.length,
        limit: maxTxnOps,
      });
    }
  }
  let bytes = 0;
  for (const c of compare) {
    checkKey(c?.key);
    if (!['==', '!=', '<', '>'].includes(c.op)) {
      throw new MetadataInvalidArgumentError('compare op must be ==, !=, < or >', { op: c.op });
    }
    bytes += Buffer.byteLength(c.key);
    switch (c.target) {
      case 'value':
        checkValue(c.value, 'compare value');
        bytes += c.value.byteLength;
        break;
      case 'lease':
        if (c.value !== null) parseLeaseId(c.value);
        break;
      case 'version':
      case 'createRevision':
      case 'modRevision':
        if (!isNonNegativeInteger(c.value)) {
          throw new MetadataInvalidArgumentError(`compare on ${c.target} needs a non-negative integer`, {
            value: c.value,
          });
        }
        break;
      default:
        throw new MetadataInvalidArgumentError('unknown compare target', { target: (c as { target: unknown }).target });
    }
  }
  for (const ops of branches) {
    const puts = new Set<string>();
    const deletes: Array<{ key: string } | { prefix: string }> = [];
    const duplicate = (key: string) =>
      new MetadataInvalidArgumentError('txn writes the same key twice', { key });
    for (const op of ops) {
      switch (op?.type) {
        case 'get':
          checkKey(op.key);
          bytes += Buffer.byteLength(op.key);
          break;
        case 'list':
          checkPrefix(op.prefix);
          checkLimit(op.limit);
          bytes += Buffer.byteLength(op.prefix);
          break;
        case 'put':
          checkKey(op.key);
          checkValue(op.value);
          if (op.lease !== undefined) parseLeaseId(op.lease);
          bytes += Buffer.byteLength(op.key) + op.value.byteLength;
          if (puts.has(op.key)) throw duplicate(op.key);
          for (const d of deletes) {
            if ('key' in d ? d.key === op.key : op.key.startsWith(d.prefix)) throw duplicate(op.key);
          }
          puts.add(op.key);
          break;
        case 'delete':
          checkKey(op.key);
          bytes += Buffer.byteLength(op.key);
          if (puts.has(op.key)) throw duplicate(op.key);
          deletes.push({ key: op.key });
          break;
        case 'deletePrefix':
          checkKey(op.prefix, 'prefix');
          bytes += Buffer.byteLength(op.prefix);
          for (const k of puts) if (k.startsWith(op.prefix)) throw duplicate(k);
          deletes.push({ prefix: op.prefix });
          break;
        default:
          throw new MetadataInvalidArgumentError('unknown txn operation', { type: (op as { type?: unknown })?.type });
      }
    }
  }
  return bytes;
}
