import { describe, expect, it } from 'vitest';
import { diffGenerated, generateFrom } from '../../../../protocol/gen/generate.js';
import { kebab, camel } from '../../../../protocol/gen/emit.js';
import { parseMessage, stripJsonComments, Versions } from '../../../../protocol/gen/schema.js';
import { SCHEMA_ROOT, specs } from '../../../support/schemas.js';

describe('protocol generator', () => {
  it('committed protocol/messages/ is exactly what the schemas generate', () => {
    const diff = diffGenerated(generateFrom(SCHEMA_ROOT));
    expect(diff, 'run `npm run gen:protocol` and commit the result').toEqual([]);
  });

  it('generates a module for every API key in the schema set', () => {
    const keys = new Set(specs.filter((s) => s.type === 'request').map((s) => s.apiKey));
    const files = generateFrom(SCHEMA_ROOT).map((f) => f.path);
    for (const k of keys) expect(files.some((p) => p.startsWith(`messages/${String(k).padStart(3, '0')}-`))).toBe(true);
    expect(keys.size).toBeGreaterThan(0);
  });

  it('is deterministic', () => {
    expect(generateFrom(SCHEMA_ROOT)).toEqual(generateFrom(SCHEMA_ROOT));
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

  it('names files and fields the way the project does', () => {
    expect(kebab('OffsetForLeaderEpoch')).toBe('offset-for-leader-epoch');
    expect(kebab('DescribeUserScramCredentials')).toBe('describe-user-scram-credentials');
    expect(camel('GroupInstanceId')).toBe('groupInstanceId');
  });
});
