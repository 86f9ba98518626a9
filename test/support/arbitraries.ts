/**
 * fast-check arbitraries for any generated message at any version, built from the schema model: fields the
 * version has get random values (null where the version allows it), fields it lacks keep their defaults,
 * and flexible versions carry a few unknown tagged fields that must survive a round trip.
 */
import fc from 'fast-check';
import { camel, structTypeName } from '../../protocol/gen/emit.js';
import type { FieldSpec, FieldType, MessageSpec, StructSpec } from '../../protocol/gen/schema.js';
import { uuidFromBytes } from '../../protocol/wire/uuid.js';
import type { LoadedMessage } from './schemas.js';

const bytes = fc.uint8Array({ maxLength: 24 }).map((a) => Buffer.from(a));

function primitive(name: string): fc.Arbitrary<unknown> {
  switch (name) {
    case 'bool':
      return fc.boolean();
    case 'int8':
      return fc.integer({ min: -128, max: 127 });
    case 'int16':
      return fc.integer({ min: -32768, max: 32767 });
    case 'uint16':
      return fc.integer({ min: 0, max: 65535 });
    case 'int32':
      return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'uint32':
      return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case 'int64':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'float64':
      return fc.double({ noNaN: true });
    case 'uuid':
      return fc.uint8Array({ minLength: 16, maxLength: 16 }).map((a) => uuidFromBytes(Buffer.from(a)));
    case 'string':
      return fc.string({ unit: 'grapheme', maxLength: 12 });
    case 'bytes':
    case 'records':
      return bytes;
  }
  throw new Error(`no arbitrary for ${name}`);
}

export function messageArbitrary(msg: LoadedMessage, version: number): fc.Arbitrary<Record<string, unknown>> {
  const spec = msg.spec;
  const flexible = (f: FieldSpec | undefined): boolean => (f?.flexibleVersions ?? spec.flexibleVersions).contains(version);

  const typeArb = (t: FieldType, depth: number): fc.Arbitrary<unknown> => {
    if (t.kind === 'primitive') return primitive(t.name);
    if (t.kind === 'struct') return structArb(spec.structs.get(t.name)!, structTypeName(spec, t.name), depth + 1);
    return fc.array(typeArb(t.element, depth + 1), { maxLength: depth > 3 ? 0 : 3 });
  };

  const structArb = (s: Pick<StructSpec, 'fields'>, typeName: string, depth: number): fc.Arbitrary<Record<string, unknown>> => {
    const create = msg.module[`create${typeName}`] as () => Record<string, unknown>;
    const fields: Record<string, fc.Arbitrary<unknown>> = {};
    for (const f of s.fields) {
      if (!f.versions.contains(version)) continue;
      let a = typeArb(f.type, depth);
      if (f.nullableVersions.contains(version)) a = fc.option(a, { nil: null, freq: 4 });
      fields[camel(f.name)] = a;
    }
    const unknownTags = flexible(undefined)
      ? fc.uniqueArray(fc.record({ tag: fc.integer({ min: 1000, max: 1_000_000 }), data: bytes }), { maxLength: 2, selector: (t) => t.tag })
          .map((tags) => (tags.length ? tags.sort((a, b) => a.tag - b.tag) : undefined))
      : fc.constant(undefined);
    return fc.tuple(fc.record(fields), unknownTags).map(([values, unknownTaggedFields]) => {
      const m = { ...create(), ...values } as Record<string, unknown>;
      if (unknownTaggedFields) m.unknownTaggedFields = unknownTaggedFields;
      return m;
    });
  };

  return structArb(spec, spec.name, 0);
}

export function isFlexible(spec: MessageSpec, version: number): boolean {
  return spec.flexibleVersions.contains(version);
}
