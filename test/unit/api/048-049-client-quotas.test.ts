import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { describeClientQuotas } from '../../../src/api/048-describe-client-quotas.js';
import { alterClientQuotas } from '../../../src/api/049-alter-client-quotas.js';
import { ClusterApiError } from '../../../src/cluster/errors.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { QuotaStore } from '../../../src/quota/quota-store.js';
import { Reader } from '../../../protocol/wire/reader.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { answer, fakeAccess, requestContext } from './fakes.js';

let store: MetadataStore | undefined;
const opened: QuotaStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  await store?.close();
  store = undefined;
});

async function broker(): Promise<{ quotas: QuotaStore }> {
  store ??= await openMetadataStore({ store: 'memory', dir: '/unused' });
  const quotas = new QuotaStore(store, {
    onWatchError: (err) => {
      throw err;
    },
  });
  opened.push(quotas);
  await quotas.load();
  return { quotas };
}

const alterRequest = (validateOnly = false) => ({
  entries: [
    { entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }], ops: [{ key: 'producer_byte_rate', value: 1048576, remove: false }] },
    { entity: [{ entityType: 'client-id', entityName: 'reports' }], ops: [{ key: 'consumer_byte_rate', value: 0.5, remove: false }] },
  ],
  validateOnly,
});

function roundTrip<T>(api: { response: { encode(w: Writer, m: T, v: number): void; decode(r: Reader, v: number): T } }, res: T, v: number): T {
  const w = new Writer();
  api.response.encode(w, res, v);
  const r = new Reader(w.toBuffer());
  const back = api.response.decode(r, v);
  r.complete();
  return back;
}

describe('AlterClientQuotas and DescribeClientQuotas', () => {
  it('alter on one broker, describe from another sharing the store, at v0 and v1', async () => {
    const one = await broker();
    const other = await broker();
    const altered = await answer(alterClientQuotas.handle(alterRequest(), requestContext(one, { apiVersion: 1 })));
    expect(altered).toMatchObject({
      throttleTimeMs: 0,
      entries: [
        { errorCode: 0, errorMessage: null, entity: [{ entityType: 'client-id', entityName: null }, { entityType: 'user', entityName: 'alice' }] },
        { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'consumer_byte_rate cannot be a fractional value.', entity: [{ entityType: 'client-id', entityName: 'reports' }] },
      ],
    });
    roundTrip(alterClientQuotas.api, altered, 0);
    const deadline = Date.now() + 5000;
    while (other.quotas.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    for (const v of [0, 1]) {
      const described = await answer(describeClientQuotas.handle({ components: [{ entityType: 'user', matchType: 0, match: 'alice' }], strict: false }, requestContext(other, { apiVersion: v })));
      expect(roundTrip(describeClientQuotas.api, described, v)).toMatchObject({
        errorCode: 0,
        entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }], values: [{ key: 'producer_byte_rate', value: 1048576 }] }],
      });
    }
  });

  it('validate only: answers without storing', async () => {
    const b = await broker();
    const res = await answer(alterClientQuotas.handle(alterRequest(true), requestContext(b, { apiVersion: 0 })));
    expect(res.entries.map((e) => e.errorCode)).toEqual([0, ErrorCode.INVALID_REQUEST]);
    expect(b.quotas.size).toBe(0);
  });

  it('answers a filter Kafka refuses with the error response: code and message at the top level, entries null', async () => {
    const b = await broker();
    const res = await answer(describeClientQuotas.handle({ components: [{ entityType: 'topic', matchType: 0, match: 't' }], strict: false }, requestContext(b, { apiVersion: 1 })));
    expect(res).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: 'Unsupported entity type topic', entries: null });
    expect(roundTrip(describeClientQuotas.api, res, 1)).toMatchObject({ entries: null });
  });

  it('needs DESCRIBE_CONFIGS and ALTER_CONFIGS on the cluster, as KafkaApis and ControllerApis', async () => {
    const b = await broker();
    const checks: string[] = [];
    const access = fakeAccess(() => false, checks);
    const described = await describeClientQuotas.handle({ components: [], strict: false }, requestContext(b, { apiVersion: 1, access }));
    expect(described).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, entries: null });
    const altered = await answer(alterClientQuotas.handle(alterRequest(), requestContext(b, { apiVersion: 1, access })));
    expect(altered.entries).toEqual([
      { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: null }] },
      { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: 'Cluster authorization failed.', entity: [{ entityType: 'client-id', entityName: 'reports' }] },
    ]);
    expect(checks).toEqual(['DESCRIBE_CONFIGS CLUSTER kafka-cluster', 'ALTER_CONFIGS CLUSTER kafka-cluster']);
    expect(b.quotas.size).toBe(0);
    const allowed = fakeAccess((op) => op !== 11 /* ALTER_CONFIGS */);
    expect(await describeClientQuotas.handle({ components: [], strict: false }, requestContext(b, { apiVersion: 1, access: allowed }))).toMatchObject({ errorCode: 0, entries: [] });
  });

  it('leaves a request changing more than 10 000 values to the dispatch seam\'s error response (POLICY_VIOLATION)', async () => {
    const b = await broker();
    const entries = Array.from({ length: 10_001 }, (_, i) => ({ entity: [{ entityType: 'client-id', entityName: `c${i}` }], ops: [{ key: 'producer_byte_rate', value: 1, remove: false }] }));
    await expect(alterClientQuotas.handle({ entries, validateOnly: true }, requestContext(b, { apiVersion: 1 }))).rejects.toBeInstanceOf(ClusterApiError);
  });
});
