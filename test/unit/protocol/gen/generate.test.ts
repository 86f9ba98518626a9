import { describe, expect, it } from 'vitest';
import { diffGenerated } from '../../../../protocol/gen/generate.js';
import { generate, kebab, camel, structTypeName } from '../../../../protocol/gen/emit.js';
import { parseMessage, stripJsonComments, Versions, type FieldSpec, type FieldType, type MessageSpec } from '../../../../protocol/gen/schema.js';
import { messagesOfModule } from '../../../support/generated-model.js';
import { schemaSet, SCHEMAS_REQUIRED, specs as generatedSpecs } from '../../../support/schemas.js';

/** What the round trips rely on of a message, with struct names as the generated code spells them. */
function shape(spec: MessageSpec): unknown {
  const type = (t: FieldType): string => (t.kind === 'array' ? `[]${type(t.element)}` : t.kind === 'struct' ? structTypeName(spec, t.name) : t.name);
  const fields = (fs: FieldSpec[]): unknown[] =>
    fs.map((f) => ({
      name: camel(f.name),
      type: type(f.type),
      versions: String(f.versions),
      nullableVersions: String(f.nullableVersions),
      taggedVersions: String(f.taggedVersions),
      tag: f.tag === undefined ? undefined : Number(f.tag), // some schemas quote it ("tag": "0")
      ignorable: f.ignorable,
      mapKey: f.mapKey,
      entityType: f.entityType,
    }));
  const structs = [...spec.structs.values()].map((s) => [structTypeName(spec, s.name), fields(s.fields)] as const).sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return { file: spec.file, validVersions: String(spec.validVersions), flexibleVersions: String(spec.flexibleVersions), fields: fields(spec.fields), structs };
}

const byName = (list: MessageSpec[]): Map<string, MessageSpec> => new Map(list.map((s) => [s.name, s]));

if (!schemaSet.available) {
  const { reason } = schemaSet;
  if (SCHEMAS_REQUIRED) {
    describe('protocol generator', () => {
      it('finds the schemas LEDGERLINE_SCHEMAS names', () => {
        expect.fail(reason);
      });
    });
  } else {
    // Plainly, once per run: the checks below are skipped, not passed.
    console.warn(`NOT RUN: the check that protocol/messages/ is exactly what Kafka's schemas generate. ${reason}.`);
  }
}

describe.skipIf(!schemaSet.available)("protocol generator (with Kafka's schemas)", () => {
  const schemas = schemaSet.available ? schemaSet.specs : [];

  it('committed protocol/messages/ is exactly what the schemas generate', () => {
    const diff = diffGenerated(generate(schemas));
    expect(diff, 'run `npm run gen:protocol` and commit the result').toEqual([]);
  });

  it('generates a module for every API key in the schema set', () => {
    const keys = new Set(schemas.filter((s) => s.type === 'request').map((s) => s.apiKey));
    const files = generate(schemas).map((f) => f.path);
    for (const k of keys) expect(files.some((p) => p.startsWith(`messages/${String(k).padStart(3, '0')}-`))).toBe(true);
    expect(keys.size).toBeGreaterThan(0);
  });

  it('is deterministic', () => {
    expect(generate(schemas)).toEqual(generate(schemas));
  });

  it('the model the round trips read back from the generated code is the schemas’ own', () => {
    const fromSchemas = byName(schemas);
    const fromCode = byName(generatedSpecs);
    expect([...fromCode.keys()].sort()).toEqual([...fromSchemas.keys()].sort());
    for (const [name, spec] of fromSchemas) expect(shape(fromCode.get(name)!), name).toEqual(shape(spec));
  });
});

describe('the model read back from generated code', () => {
  it('covers every generated module, requests and responses of every API key among them', () => {
    const keys = new Set(generatedSpecs.filter((s) => s.type === 'request').map((s) => s.apiKey));
    expect(keys.size).toBeGreaterThan(80);
    for (const k of keys) expect(generatedSpecs.some((s) => s.type === 'response' && s.apiKey === k), `response of API key ${k}`).toBe(true);
    expect(generatedSpecs.some((s) => s.type === 'header')).toBe(true);
    expect(generatedSpecs.some((s) => s.type === 'data')).toBe(true);
  });

  it('reads the wire type, versions, nullability and tag of each field from the module', () => {
    const text = JSON.stringify({
      apiKey: 99,
      type: 'request',
      name: 'ProbeRequest',
      validVersions: '0-3',
      flexibleVersions: '2+',
      fields: [
        { name: 'Small', type: 'int16', versions: '0+' },
        { name: 'Id', type: 'uuid', versions: '1+' },
        { name: 'Name', type: 'string', versions: '0+', nullableVersions: '1+' },
        { name: 'Hint', type: 'int32', versions: '2+', taggedVersions: '2+', tag: 0, default: -1 },
        { name: 'Ports', type: '[]uint16', versions: '0+' },
        { name: 'Items', type: '[]Item', versions: '0+', nullableVersions: '3+', fields: [{ name: 'Weight', type: 'float64', versions: '0+' }] },
      ],
    });
    const request = parseMessage('messages/ProbeRequest.json', text);
    const response = parseMessage('messages/ProbeResponse.json', text.replace('"request"', '"response"').replace('ProbeRequest', 'ProbeResponse'));
    const module = generate([request, response]).find((f) => f.path === 'messages/099-probe.gen.ts')!;
    const [back] = messagesOfModule(module.path, module.content);
    expect(shape(back!)).toEqual(shape(request));
    expect(back!.type).toBe('request');
    expect(back!.apiKey).toBe(99);
  });
});

describe('schema parsing', () => {
  it('parses version ranges as Kafka writes them', () => {
    expect(Versions.parse('3+')).toEqual(new Versions(3, Infinity));
    expect(Versions.parse('0-7')).toEqual(new Versions(0, 7));
    expect(Versions.parse('5')).toEqual(new Versions(5, 5));
    expect(Versions.parse('none').empty).toBe(true);
    expect(() => Versions.parse('1..2')).toThrow(/bad version range/);
  });

  it('strips // comments but not // inside strings', () => {
    expect(JSON.parse(stripJsonComments('{ "a": "http://x" // note\n, "b": 1 }'))).toEqual({ a: 'http://x', b: 1 });
  });

  it('rejects a field naming an undefined struct', () => {
    const text = JSON.stringify({ name: 'X', type: 'data', validVersions: '0', flexibleVersions: 'none', fields: [{ name: 'A', type: 'Missing', versions: '0+' }] });
    expect(() => parseMessage('X.json', text)).toThrow(/unknown struct Missing/);
  });

  it('reads a field that only travels tagged and leaves out its versions (Kafka 4.4 StreamsGroupMetadataValue)', () => {
    const text = JSON.stringify({
      name: 'X',
      type: 'data',
      validVersions: '0',
      flexibleVersions: '0+',
      fields: [{ name: 'Configs', type: '[]string', taggedVersions: '0+', nullableVersions: '0+', tag: 1, default: null }],
    });
    const [f] = parseMessage('X.json', text).fields;
    expect(String(f!.versions)).toBe('0+');
    expect(String(f!.taggedVersions)).toBe('0+');
  });

  it('reads the schema a release keeps for an API it removed: validVersions "none" and no fields', () => {
    const spec = parseMessage('LeaderAndIsrRequest.json', JSON.stringify({ apiKey: 4, type: 'request', name: 'LeaderAndIsrRequest', validVersions: 'none' }));
    expect(spec.validVersions.empty).toBe(true);
    expect(spec.fields).toEqual([]);
  });

  it('names files and fields the way the project does', () => {
    expect(kebab('OffsetForLeaderEpoch')).toBe('offset-for-leader-epoch');
    expect(kebab('DescribeUserScramCredentials')).toBe('describe-user-scram-credentials');
    expect(camel('GroupInstanceId')).toBe('groupInstanceId');
  });
});
