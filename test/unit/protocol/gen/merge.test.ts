import { describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeMessage, mergeSchemaSets, wireDisagreement } from '../../../../protocol/gen/merge.js';
import { loadSchemas, parseMessage, type MessageSpec } from '../../../../protocol/gen/schema.js';
import { generate } from '../../../../protocol/gen/emit.js';
import { schemaSet } from '../../../support/schemas.js';

type RawField = { name: string; type: string; versions?: string; nullableVersions?: string; taggedVersions?: string; tag?: number; default?: string | number; fields?: RawField[] };

function spec(file: string, name: string, validVersions: string, fields: RawField[], extra: object = {}): MessageSpec {
  const type = name.endsWith('Request') ? 'request' : name.endsWith('Response') ? 'response' : 'data';
  return parseMessage(file, JSON.stringify({ apiKey: type === 'data' ? undefined : 2, type, name, validVersions, flexibleVersions: '6+', fields, ...extra }));
}

// ListOffsets as Kafka 3.9 and 4.4 have it, cut down: 4.x dropped v0 (KIP-896) and with it MaxNumOffsets.
const OLD_LIST_OFFSETS: RawField[] = [
  { name: 'ReplicaId', type: 'int32', versions: '0+' },
  { name: 'IsolationLevel', type: 'int8', versions: '2+' },
  {
    name: 'Topics',
    type: '[]ListOffsetsTopic',
    versions: '0+',
    fields: [
      { name: 'Name', type: 'string', versions: '0+' },
      { name: 'Partitions', type: '[]ListOffsetsPartition', versions: '0+', fields: [
        { name: 'PartitionIndex', type: 'int32', versions: '0+' },
        { name: 'Timestamp', type: 'int64', versions: '0+' },
        { name: 'MaxNumOffsets', type: 'int32', versions: '0', default: 1 },
      ] },
    ],
  },
];
const NEW_LIST_OFFSETS: RawField[] = [
  { name: 'ReplicaId', type: 'int32', versions: '0+' },
  { name: 'IsolationLevel', type: 'int8', versions: '2+' },
  {
    name: 'Topics',
    type: '[]ListOffsetsTopic',
    versions: '0+',
    fields: [
      { name: 'Name', type: 'string', versions: '0+' },
      { name: 'Partitions', type: '[]ListOffsetsPartition', versions: '0+', fields: [
        { name: 'PartitionIndex', type: 'int32', versions: '0+' },
        { name: 'Timestamp', type: 'int64', versions: '0+' },
      ] },
    ],
  },
  { name: 'TimeoutMs', type: 'int32', versions: '10+', taggedVersions: '10+', tag: 0 },
];

describe('merging an older schema set into a newer one', () => {
  const older = spec('messages/ListOffsetsRequest.json', 'ListOffsetsRequest', '0-9', OLD_LIST_OFFSETS);
  const newer = spec('4.4.0/messages/ListOffsetsRequest.json', 'ListOffsetsRequest', '1-11', NEW_LIST_OFFSETS);

  it('serves the union of versions, old ones laid out as the older set says, new ones as the newer', () => {
    const merged = mergeMessage(older, newer);
    expect(String(merged.validVersions)).toBe('0-11');
    expect(merged.file).toBe('4.4.0/messages/ListOffsetsRequest.json');
    expect(merged.olderVersions).toEqual({ file: 'messages/ListOffsetsRequest.json', versions: expect.objectContaining({ min: 0, max: 0 }) });
    const partition = merged.structs.get('ListOffsetsPartition')!;
    expect(partition.fields.map((f) => `${f.name} v${String(f.versions)}`)).toEqual(['PartitionIndex v0+', 'Timestamp v0+', 'MaxNumOffsets v0']);
    for (let v = 0; v <= 9; v++) expect(wireDisagreement(older, merged, v), `v${v}`).toBeUndefined();
    for (let v = 1; v <= 11; v++) expect(wireDisagreement(newer, merged, v), `v${v}`).toBeUndefined();
  });

  it('fails loudly when both sets define a version and disagree on its wire layout', () => {
    const changed = structuredClone(NEW_LIST_OFFSETS);
    changed[0] = { name: 'ReplicaId', type: 'int64', versions: '0+' };
    const bad = spec('4.4.0/messages/ListOffsetsRequest.json', 'ListOffsetsRequest', '1-11', changed);
    expect(() => mergeMessage(older, bad)).toThrow(/ListOffsetsRequest v1: .* disagree on the wire \(field 1 differs: int32 vs int64\)/);
  });

  it('accepts renamed fields and tagged fields added to a version, which leave old bytes readable', () => {
    const renamed = structuredClone(NEW_LIST_OFFSETS);
    renamed[0] = { name: 'ReplicaOrBrokerId', type: 'int32', versions: '0+' };
    renamed.push({ name: 'Hint', type: 'int32', versions: '6+', taggedVersions: '6+', tag: 1, default: -1 });
    expect(() => mergeMessage(older, spec('4.4.0/messages/ListOffsetsRequest.json', 'ListOffsetsRequest', '1-11', renamed))).not.toThrow();
  });

  it('takes the newer layout of a version the older release published as unstable', () => {
    const unstable = spec('messages/ListOffsetsRequest.json', 'ListOffsetsRequest', '0-9', OLD_LIST_OFFSETS, { latestVersionUnstable: true });
    const changed = structuredClone(NEW_LIST_OFFSETS);
    changed.push({ name: 'Extra', type: 'int8', versions: '9+' });
    const n = spec('4.4.0/messages/ListOffsetsRequest.json', 'ListOffsetsRequest', '1-11', changed);
    expect(() => mergeMessage(older, n)).toThrow(/v9/);
    expect(String(mergeMessage(unstable, n).validVersions)).toBe('0-11');
  });

  it('keeps an API the newer release removed (validVersions "none") whole from the older set', () => {
    const removed = parseMessage('4.4.0/messages/ListOffsetsRequest.json', JSON.stringify({ apiKey: 2, type: 'request', name: 'ListOffsetsRequest', validVersions: 'none' }));
    expect(mergeMessage(older, removed)).toBe(older);
  });

  it('matches APIs by key across a rename and keeps messages only one set has', () => {
    const renamed = parseMessage('4.4.0/messages/ListOffsetsRequest.json', JSON.stringify({ apiKey: 2, type: 'request', name: 'ListOffsetRequest', validVersions: '1-11', flexibleVersions: '6+', fields: NEW_LIST_OFFSETS }));
    const onlyOld = spec('messages/Gone.json', 'Gone', '0', []);
    const onlyNew = spec('4.4.0/messages/Fresh.json', 'Fresh', '0', []);
    const merged = mergeSchemaSets([older, onlyOld], [renamed, onlyNew]);
    expect(merged.map((m) => `${m.name} ${String(m.validVersions)}`)).toEqual(['ListOffsetRequest 0-11', 'Fresh 0', 'Gone 0']);
  });
});

describe('coordinator records of both releases', () => {
  it("reads a Kafka 4 coordinator key (type as apiKey) as Kafka 3's (type as the key's version)", () => {
    const key = parseMessage(
      '4.4.0/coordinator-records/group-coordinator/ConsumerGroupMetadataKey.json',
      JSON.stringify({ apiKey: 3, type: 'coordinator-key', name: 'ConsumerGroupMetadataKey', validVersions: '0', flexibleVersions: 'none', fields: [{ name: 'GroupId', type: 'string', versions: '0' }] }),
    );
    expect(key.type).toBe('data');
    expect(String(key.validVersions)).toBe('3');
    expect(String(key.fields[0]!.versions)).toBe('3');
    const old = parseMessage(
      'coordinator-records/group-coordinator/ConsumerGroupMetadataKey.json',
      JSON.stringify({ type: 'data', name: 'ConsumerGroupMetadataKey', validVersions: '3', flexibleVersions: 'none', fields: [{ name: 'GroupId', type: 'string', versions: '3' }] }),
    );
    expect(mergeMessage(old, key)).toBe(key);
  });
});

describe('loadSchemas', () => {
  it('takes the newest release folder beside the top-level set as the newer source', () => {
    const root = mkdtempSync(join(tmpdir(), 'll-schemas-'));
    try {
      const schema = (name: string, apiKey: number, validVersions: string): string =>
        JSON.stringify({ apiKey, type: 'request', name, validVersions, flexibleVersions: 'none', fields: [{ name: 'A', type: 'int8', versions: '0+' }] });
      for (const d of ['messages', '4.4.0/messages', '4.0.0/messages']) mkdirSync(join(root, d), { recursive: true });
      writeFileSync(join(root, 'messages', 'PingRequest.json'), schema('PingRequest', 900, '0-2'));
      writeFileSync(join(root, '4.0.0', 'messages', 'PingRequest.json'), schema('PingRequest', 900, '1-3'));
      writeFileSync(join(root, '4.4.0', 'messages', 'PingRequest.json'), schema('PingRequest', 900, '1-5'));
      const [ping] = loadSchemas(root);
      expect(ping!.file).toBe('4.4.0/messages/PingRequest.json');
      expect(String(ping!.validVersions)).toBe('0-5');
      expect(ping!.olderVersions?.file).toBe('messages/PingRequest.json');
      // A release folder alone is a set of its own.
      expect(loadSchemas(join(root, '4.4.0')).map((s) => s.file)).toEqual(['messages/PingRequest.json']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!schemaSet.available)("Kafka's own schema sets merged (3.9.0 and 4.4.0)", () => {
  const specs = schemaSet.available ? schemaSet.specs : [];
  const byName = new Map(specs.map((s) => [s.name, s]));

  it('serves the versions KIP-896 removed beside the 4.4 ones', () => {
    const ranges = Object.fromEntries(['ProduceRequest', 'FetchRequest', 'ListOffsetsRequest', 'OffsetCommitRequest', 'MetadataRequest', 'ApiVersionsRequest', 'LeaderAndIsrRequest'].map((n) => [n, String(byName.get(n)!.validVersions)]));
    expect(ranges).toEqual({ ProduceRequest: '0-13', FetchRequest: '0-18', ListOffsetsRequest: '0-11', OffsetCommitRequest: '0-10', MetadataRequest: '0-13', ApiVersionsRequest: '0-5', LeaderAndIsrRequest: '0-7' });
  });

  it('has the APIs and records only 4.4.0 defines, and the transaction log records from it', () => {
    expect(byName.get('ListConfigResourcesRequest')?.apiKey).toBe(74);
    expect(byName.has('ListClientMetricsResourcesRequest')).toBe(false);
    expect(byName.get('TransactionLogValue')!.file).toBe('4.4.0/coordinator-records/transaction-coordinator/TransactionLogValue.json');
    expect(byName.get('TransactionLogValue')!.fields.map((f) => f.name)).toContain('ClientTransactionVersion');
    expect(String(byName.get('OffsetCommitKey')!.validVersions)).toBe('0-1');
    expect(String(byName.get('LegacyOffsetCommitKey')!.validVersions)).toBe('0');
  });

  it('generates without error and every module names where its versions came from', () => {
    const produce = generate(specs).find((f) => f.path === 'messages/000-produce.gen.ts')!;
    expect(produce.content).toContain('ProduceRequest v0-2 from messages/ProduceRequest.json');
  });
});
