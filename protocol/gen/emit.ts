/**
 * Emits TypeScript for parsed Kafka message schemas: per message, one interface covering every version,
 * `create`/`encode`/`decode` functions with version guards, and per API key a descriptor tying request
 * and response together. The output is deterministic: the same schemas always give the same bytes.
 *
 * Wire rules followed (Kafka's MessageDataGenerator and KIP-482):
 *  - a field is on the wire in the versions it declares, except in its tagged versions, where it goes in
 *    the tag buffer and only when it differs from its default;
 *  - flexible versions use compact strings/bytes/arrays (unsigned varint length + 1) and end every struct
 *    with a tag buffer; a field may opt out of compact encoding (`flexibleVersions: "none"`);
 *  - nullable strings/bytes/arrays use length -1 (0 when compact), nullable structs a leading int8 (-1/1);
 *  - writing a non-default value in a version that lacks a non-ignorable field, or a null where the version
 *    does not allow one, fails as Kafka's generated code does.
 */
import type { FieldSpec, FieldType, MessageSpec, StructSpec } from './schema.js';
import { Versions } from './schema.js';

/** The largest decoded array allocated at its full count up front (emitArrayRead). */
const PREALLOCATED_MAX = 4096;

export interface GeneratedFile {
  /** Path relative to `protocol/`, with `/` separators. */
  path: string;
  content: string;
}

/** A condition on the version variable `v`: statically true/false, or a TypeScript expression. */
type Cond = boolean | string;

function within(field: Versions, scope: Versions): Cond {
  const f = field.intersect(scope);
  if (f.empty) return false;
  if (f.min <= scope.min && f.max >= scope.max) return true;
  const parts: string[] = [];
  if (f.min > scope.min) parts.push(`v >= ${f.min}`);
  if (f.max < scope.max) parts.push(`v <= ${f.max}`);
  return parts.join(' && ');
}

function not(c: Cond): Cond {
  if (typeof c === 'boolean') return !c;
  return `!(${c})`;
}

function and(a: Cond, b: Cond): Cond {
  if (a === false || b === false) return false;
  if (a === true) return b;
  if (b === true) return a;
  return `${a} && ${b}`;
}

function ifElse(c: Cond, then: string[], otherwise: string[], indent: string): string[] {
  if (c === true) return then;
  if (c === false) return otherwise;
  if (then.length === 0) return otherwise.length === 0 ? [] : ifElse(not(c), otherwise, [], indent);
  const out = [`${indent}if (${c}) {`, ...then.map((l) => '  ' + l), `${indent}}`];
  if (otherwise.length > 0) {
    out[out.length - 1] += ' else {';
    out.push(...otherwise.map((l) => '  ' + l), `${indent}}`);
  }
  return out;
}

export function camel(name: string): string {
  return name[0]!.toLowerCase() + name.slice(1);
}

export function kebab(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1-$2')
    .toLowerCase();
}

function docComment(lines: string[], indent: string): string[] {
  const text = lines.filter((l) => l.length > 0).map((l) => l.replace(/\*\//g, '*\\/'));
  if (text.length === 0) return [];
  if (text.length === 1) return [`${indent}/** ${text[0]} */`];
  return [`${indent}/**`, ...text.map((l) => `${indent} * ${l}`), `${indent} */`];
}

/** Regular (non-tagged) versions of a field: its versions minus its tagged versions. */
function regularVersions(f: FieldSpec): Versions {
  const t = f.taggedVersions;
  if (t.empty) return f.versions;
  if (t.covers(f.versions)) return Versions.NONE;
  if (t.max >= f.versions.max && t.min > f.versions.min) return new Versions(f.versions.min, t.min - 1);
  throw new Error(`field ${f.name}: tagged versions ${t} must be a suffix of versions ${f.versions}`);
}

const PRIMITIVE_TS: Record<string, string> = {
  bool: 'boolean',
  int8: 'number',
  int16: 'number',
  uint16: 'number',
  int32: 'number',
  uint32: 'number',
  int64: 'bigint',
  float64: 'number',
  uuid: 'string',
  string: 'string',
  bytes: 'Buffer',
  records: 'Records',
};

const FIXED_WRITE: Record<string, string> = {
  bool: 'bool',
  int8: 'int8',
  int16: 'int16',
  uint16: 'uint16',
  int32: 'int32',
  uint32: 'uint32',
  int64: 'int64',
  float64: 'float64',
  uuid: 'uuid',
};

const FIXED_SIZE: Record<string, number> = {
  bool: 1,
  int8: 1,
  int16: 2,
  uint16: 2,
  int32: 4,
  uint32: 4,
  int64: 8,
  float64: 8,
  uuid: 16,
};

/**
 * The TypeScript name of a message's struct: Kafka's struct name prefixed with the message name unless it
 * already starts with it (`FetchResponse` + `PartitionData` → `FetchResponsePartitionData`, while
 * `JoinGroupResponseMember` stays), so names are unique across a module and searchable in Kafka's docs.
 */
export function structTypeName(spec: MessageSpec, struct: string): string {
  return struct.startsWith(spec.name) ? struct : spec.name + struct;
}

/** Path (relative to `protocol/`) of the module that holds a message. */
export function modulePath(spec: MessageSpec): string {
  if (spec.type === 'request' || spec.type === 'response') {
    const api = spec.name.replace(/(Request|Response)$/, '');
    return `messages/${String(spec.apiKey).padStart(3, '0')}-${kebab(api)}.gen.ts`;
  }
  if (spec.type === 'header') return `messages/${kebab(spec.name)}.gen.ts`;
  const dir = spec.file.split('/').slice(0, -1);
  const sub = dir.length > 0 && dir[dir.length - 1] !== 'messages' ? `${dir[dir.length - 1]}/` : '';
  return `messages/data/${sub}${kebab(spec.name)}.gen.ts`;
}

class MessageEmitter {
  readonly lines: string[] = [];
  usesTagged = false;
  usesNonNull = false;
  usesNotInVersion = false;
  usesDeepEqual = false;
  usesZeroUuid = false;
  usesEmptyBuffer = false;
  usesRecords = false;
  /** Struct types whose default instance the writers compare against. */
  readonly defaultInstances = new Set<string>();
  private readonly flexible: Versions;

  constructor(readonly spec: MessageSpec) {
    this.flexible = spec.flexibleVersions;
  }

  typeName(struct: string): string {
    return structTypeName(this.spec, struct);
  }

  private tsType(t: FieldType): string {
    switch (t.kind) {
      case 'primitive':
        if (t.name === 'records') this.usesRecords = true;
        return PRIMITIVE_TS[t.name]!;
      case 'struct':
        return this.typeName(t.name);
      case 'array': {
        const e = this.tsType(t.element);
        return `${e}[]`;
      }
    }
  }

  private fieldTsType(f: FieldSpec): string {
    const t = this.tsType(f.type);
    return f.nullableVersions.empty ? t : `${t} | null`;
  }

  /** TypeScript expression for a field's default value. */
  defaultExpr(f: FieldSpec): string {
    const d = f.default;
    const isNullDefault = d === 'null';
    if (isNullDefault && f.nullableVersions.empty) throw new Error(`${this.spec.name}.${f.name}: null default on a non-nullable field`);
    const t = f.type;
    if (t.kind === 'array') return isNullDefault ? 'null' : '[]';
    if (t.kind === 'struct') return isNullDefault ? 'null' : `create${this.typeName(t.name)}()`;
    switch (t.name) {
      case 'bool':
        return d === true || d === 'true' ? 'true' : 'false';
      case 'int8':
      case 'int16':
      case 'uint16':
      case 'int32':
      case 'uint32':
      case 'float64': {
        if (d === undefined || d === '') return '0';
        const n = typeof d === 'number' ? d : Number(String(d));
        if (!Number.isFinite(n)) throw new Error(`${this.spec.name}.${f.name}: bad default ${String(d)}`);
        return String(n);
      }
      case 'int64': {
        if (d === undefined || d === '') return '0n';
        return `${BigInt(typeof d === 'number' ? d : String(d))}n`;
      }
      case 'uuid':
        this.usesZeroUuid = true;
        return 'ZERO_UUID';
      case 'string':
        if (isNullDefault) return 'null';
        return JSON.stringify(d === undefined ? '' : String(d));
      case 'bytes':
      case 'records':
        if (isNullDefault || (d === undefined && t.name === 'records' && !f.nullableVersions.empty)) return 'null';
        this.usesEmptyBuffer = true;
        return 'EMPTY_BUFFER';
    }
    throw new Error('unreachable');
  }

  private flexCond(f: FieldSpec, scope: Versions): Cond {
    return within(f.flexibleVersions ?? this.flexible, scope);
  }

  /** Minimum encoded size of one value of type `t`, for validating array counts before allocation. */
  minSize(t: FieldType, seen: Set<string> = new Set()): number {
    if (t.kind === 'array') return 1;
    if (t.kind === 'primitive') return FIXED_SIZE[t.name] ?? 1;
    const s = this.spec.structs.get(t.name)!;
    if (seen.has(s.name)) return 0;
    seen.add(s.name);
    let n = 0;
    for (const f of s.fields) if (regularVersions(f).covers(s.versions)) n += f.nullableVersions.empty || f.type.kind !== 'struct' ? this.minSize(f.type, seen) : 1;
    seen.delete(s.name);
    return n;
  }

  // ---- encoding ---------------------------------------------------------------------------------

  private writeValue(t: FieldType, expr: string, flex: Cond, nullable: Cond, label: string, indent: string): string[] {
    if (t.kind === 'primitive') {
      const fixed = FIXED_WRITE[t.name];
      if (fixed) return [`${indent}w.${fixed}(${expr});`];
      const base = t.name === 'string' ? 'String' : t.name === 'records' ? 'Records' : 'Bytes';
      const method = (compact: boolean, nul: boolean): string => {
        const m = `${compact ? 'compact' : ''}${nul ? 'Nullable' : ''}${base}`;
        return m[0]!.toLowerCase() + m.slice(1);
      };
      const call = (compact: boolean, nul: boolean): string[] => {
        if (nul) return [`${indent}w.${method(compact, true)}(${expr});`];
        const v = nullable === false ? expr : this.nonNull(expr, label);
        return [`${indent}w.${method(compact, false)}(${v});`];
      };
      const byNull = (compact: boolean): string[] => ifElse(nullable, call(compact, true), call(compact, false), indent);
      return ifElse(flex, byNull(true), byNull(false), indent);
    }
    if (t.kind === 'struct') {
      const name = this.typeName(t.name);
      const write = (e: string): string[] => [`${indent}write${name}(w, ${e}, v);`];
      if (nullable === false) return write(expr);
      const nullableBranch = [
        `${indent}if (${expr} === null) {`,
        `${indent}  w.int8(-1);`,
        `${indent}} else {`,
        `${indent}  w.int8(1);`,
        ...write(expr).map((l) => '  ' + l),
        `${indent}}`,
      ];
      return ifElse(nullable, nullableBranch, write(this.nonNull(expr, label)), indent);
    }
    // array
    const el = t.element;
    const lenWrite = (compact: boolean, e: string): string => (compact ? `w.compactArrayLength(${e}.length);` : `w.arrayLength(${e}.length);`);
    const body = (compact: boolean, e: string): string[] => [
      `${indent}${lenWrite(compact, e)}`,
      `${indent}for (const x of ${e}) {`,
      ...this.writeValue(el, 'x', flex, false, label + '[]', indent + '  '),
      `${indent}}`,
    ];
    const byFlex = (e: string): string[] => ifElse(flex, body(true, e), body(false, e), indent);
    if (nullable === false) return byFlex(expr);
    const nullLen = ifElse(flex, [`${indent}w.uvarint(0);`], [`${indent}w.int32(-1);`], indent);
    const nullableBranch = [
      `${indent}if (${expr} === null) {`,
      ...nullLen.map((l) => '  ' + l),
      `${indent}} else {`,
      ...byFlex(expr).map((l) => '  ' + l),
      `${indent}}`,
    ];
    return ifElse(nullable, nullableBranch, byFlex(this.nonNull(expr, label)), indent);
  }

  private nonNull(expr: string, label: string): string {
    this.usesNonNull = true;
    return `nonNull(${expr}, '${label}', v)`;
  }

  /** Statement that fails when a field absent from the version holds a non-default value. */
  private absentCheck(f: FieldSpec, expr: string, indent: string): string[] {
    if (f.ignorable) return [];
    const t = f.type;
    if (t.kind === 'struct') return [];
    this.usesNotInVersion = true;
    return [`${indent}if (${this.differsFromDefault(f, expr)}) notInVersion('${this.spec.name}.${f.name}', v);`];
  }

  private emitWriter(s: StructSpec, isTop: boolean): void {
    const name = isTop ? this.spec.name : this.typeName(s.name);
    const L = this.lines;
    L.push(`function write${name}(w: Writer, m: ${name}, v: number): void {`);
    for (const f of s.fields) {
      const expr = `m.${camel(f.name)}`;
      const scope = regularVersions(f).intersect(s.versions);
      const regular = within(regularVersions(f), s.versions);
      const write = scope.empty
        ? []
        : this.writeValue(f.type, expr, this.flexCond(f, scope), within(f.nullableVersions, scope), `${this.spec.name}.${f.name}`, '  ');
      const check = this.absentCheck(f, expr, '  ');
      // Outside its regular versions a tagged field may still be present (in the tag buffer).
      const absent = f.taggedVersions.empty ? check : ifElse(not(within(f.versions, s.versions)), check, [], '  ');
      L.push(...ifElse(regular, write, absent, '  '));
    }
    const flexible = within(this.flexible, s.versions);
    if (flexible !== false) {
      const tagged = s.fields.filter((f) => !f.taggedVersions.empty).sort((a, b) => a.tag! - b.tag!);
      this.usesTagged = true;
      const body: string[] = [];
      if (tagged.length === 0) {
        body.push('  writeTagBuffer(w, NO_TAGS, m.unknownTaggedFields);');
      } else {
        body.push('  const tags: TaggedWrite[] = [];');
        for (const f of tagged) {
          const expr = `m.${camel(f.name)}`;
          const scope = f.taggedVersions.intersect(s.versions);
          const cond = and(within(f.taggedVersions, s.versions), this.differsFromDefault(f, expr));
          const write = this.writeValue(f.type, expr, true, within(f.nullableVersions, scope), `${this.spec.name}.${f.name}`, '    ');
          body.push(...ifElse(cond, [`  tags.push({ tag: ${f.tag}, write: (w) => {`, ...write.map((l) => '  ' + l), '  } });'], [], '  '));
        }
        body.push('  writeTagBuffer(w, tags, m.unknownTaggedFields);');
      }
      L.push(...ifElse(flexible, body, [], '  '));
    }
    L.push('}', '');
  }

  /** Expression true when a field's value is not its default (tagged fields are written only then). */
  private differsFromDefault(f: FieldSpec, expr: string): string {
    const t = f.type;
    const d = this.defaultExpr(f);
    if (t.kind === 'primitive' && (FIXED_WRITE[t.name] || t.name === 'string')) return `${expr} !== ${d}`;
    if (d === 'null') return `${expr} !== null`;
    const nullable = !f.nullableVersions.empty;
    if (!nullable && (t.kind === 'array' || d === 'EMPTY_BUFFER')) return `${expr}.length !== 0`;
    this.usesDeepEqual = true;
    if (t.kind === 'struct') {
      // Compare with one shared default instance rather than building one per write.
      const name = this.typeName(t.name);
      this.defaultInstances.add(name);
      return `!deepEqual(${expr}, DEFAULT_${name})`;
    }
    return `!deepEqual(${expr}, ${d})`;
  }

  // ---- decoding ---------------------------------------------------------------------------------

  /** Statements that read a value of type `t` into `target` (an already declared variable). */
  private readInto(t: FieldType, target: string, flex: Cond, nullable: Cond, label: string, indent: string, r = 'r'): string[] {
    if (t.kind === 'primitive') {
      const fixed = FIXED_WRITE[t.name];
      if (fixed) return [`${indent}${target} = ${r}.${fixed}();`];
      const base = t.name === 'string' ? 'String' : t.name === 'records' ? 'Records' : 'Bytes';
      const read = (compact: boolean, nul: boolean): string[] => {
        const m = `${compact ? 'compact' : ''}${nul ? 'Nullable' : ''}${base}`;
        return [`${indent}${target} = ${r}.${m[0]!.toLowerCase() + m.slice(1)}();`];
      };
      const byNull = (compact: boolean): string[] => ifElse(nullable, read(compact, true), read(compact, false), indent);
      return ifElse(flex, byNull(true), byNull(false), indent);
    }
    if (t.kind === 'struct') {
      const name = this.typeName(t.name);
      const read = [`${indent}${target} = read${name}(${r}, v);`];
      const nullableRead = [
        `${indent}if (${r}.int8() < 0) {`,
        `${indent}  ${target} = null;`,
        `${indent}} else {`,
        `${indent}  ${target} = read${name}(${r}, v);`,
        `${indent}}`,
      ];
      return ifElse(nullable, nullableRead, read, indent);
    }
    const el = t.element;
    const elType = this.tsType(el);
    const min = this.minSize(el);
    const n = `n${indent.length}`;
    const a = `a${indent.length}`;
    const lenLines = ifElse(
      flex,
      [`${indent}const ${n} = ${r}.compactArrayLength(${min});`],
      [`${indent}const ${n} = ${r}.arrayLength(${min});`],
      indent,
    );
    if (typeof flex === 'string') lenLines.splice(0, lenLines.length, `${indent}const ${n} = ${flex} ? ${r}.compactArrayLength(${min}) : ${r}.arrayLength(${min});`);
    const nullCheck =
      nullable === true
        ? [`${indent}if (${n} < 0) {`, `${indent}  ${target} = null;`, `${indent}} else {`]
        : nullable === false
          ? [`${indent}if (${n} < 0) {`, `${indent}  ${r}.fail('non-nullable field ${label} was serialized as null');`, `${indent}  ${target} = [];`, `${indent}} else {`]
          : [
              `${indent}if (${n} < 0) {`,
              `${indent}  if (!(${nullable})) ${r}.fail('non-nullable field ${label} was serialized as null');`,
              `${indent}  ${target} = ${nullable} ? null : [];`,
              `${indent}} else {`,
            ];
    const elVar = `e${indent.length}`;
    const inner = this.readInto(el, elVar, flex, false, label + '[]', indent + '      ', r);
    const elementRead =
      inner.length === 1
        ? [inner[0]!.replace(`${elVar} = `, `${a}[i] = `)]
        : [`${indent}      let ${elVar}: ${elType};`, ...inner, `${indent}      ${a}[i] = ${elVar};`];
    // Sized to the count, which the reader has checked against the bytes left: an array grown from [] keeps 17
    // slots for its first element, and a request of 30,000 transactions of one topic and three partitions held
    // 6 MiB of empty slots. Above PREALLOCATED_MAX V8 would make `new Array(n)` a dictionary; it grows instead.
    return [
      `${indent}{`,
      ...lenLines.map((l) => '  ' + l),
      ...nullCheck.map((l) => '  ' + l),
      `${indent}    const ${a}: ${elType}[] = ${n} <= ${PREALLOCATED_MAX} ? new Array<${elType}>(${n}) : [];`,
      `${indent}    for (let i = 0; i < ${n} && ${r}.ok; i++) {`,
      ...elementRead,
      `${indent}    }`,
      `${indent}    ${target} = ${a};`,
      `${indent}  }`,
      `${indent}}`,
    ];
  }

  private emitReader(s: StructSpec, isTop: boolean): void {
    const name = isTop ? this.spec.name : this.typeName(s.name);
    const L = this.lines;
    L.push(`function read${name}(r: Reader, v: number): ${name} {`);
    for (const f of s.fields) {
      const local = `f_${camel(f.name)}`;
      const regular = within(regularVersions(f), s.versions);
      const scope = regularVersions(f).intersect(s.versions);
      const label = `${this.spec.name}.${f.name}`;
      const tagged = !f.taggedVersions.empty;
      if (regular === true && !tagged) {
        const read = this.readInto(f.type, local, this.flexCond(f, scope), within(f.nullableVersions, scope), label, '  ');
        if (read.length === 1) L.push(read[0]!.replace(`  ${local} = `, `  const ${local}: ${this.fieldTsType(f)} = `));
        else L.push(`  let ${local}: ${this.fieldTsType(f)};`, ...read);
      } else if (regular === false) {
        L.push(`  let ${local}: ${this.fieldTsType(f)} = ${this.defaultExpr(f)};`);
      } else {
        L.push(`  let ${local}: ${this.fieldTsType(f)};`);
        L.push(
          ...ifElse(
            regular,
            this.readInto(f.type, local, this.flexCond(f, scope), within(f.nullableVersions, scope), label, '  '),
            [`  ${local} = ${this.defaultExpr(f)};`],
            '  ',
          ),
        );
      }
    }
    const flexible = within(this.flexible, s.versions);
    L.push('  let unknownTaggedFields: TaggedField[] | undefined;');
    if (flexible !== false) {
      this.usesTagged = true;
      const tagged = s.fields.filter((f) => !f.taggedVersions.empty).sort((a, b) => a.tag! - b.tag!);
      const body: string[] = [
        '  const count = r.uvarint();',
        '  for (let i = 0; i < count && r.ok; i++) {',
        '    const tag = r.uvarint();',
        '    const size = r.uvarint();',
      ];
      if (tagged.length > 0) {
        body.push('    switch (tag) {');
        for (const f of tagged) {
          const scope = f.taggedVersions.intersect(s.versions);
          const cond = within(f.taggedVersions, s.versions);
          const local = `f_${camel(f.name)}`;
          body.push(`      case ${f.tag}:`);
          const read = [
            '        {',
            '          const t = r.sub(size);',
            ...this.readInto(f.type, local, true, within(f.nullableVersions, scope), `${this.spec.name}.${f.name}`, '          ', 't'),
            '          r.adopt(t);',
            '          continue;',
            '        }',
          ];
          body.push(...(cond === true ? read : [`        if (${cond === false ? 'false' : cond}) {`, ...read.map((l) => '  ' + l), '        }', '        break;']));
        }
        body.push('    }');
      }
      body.push('    (unknownTaggedFields ??= []).push({ tag, data: r.raw(size) });', '  }');
      L.push(...ifElse(flexible, body, [], '  '));
    }
    const fields = s.fields.map((f) => `${camel(f.name)}: f_${camel(f.name)}`);
    L.push(`  return { ${[...fields, 'unknownTaggedFields'].join(', ')} };`, '}', '');
  }

  // ---- types and factories ----------------------------------------------------------------------

  private emitType(s: StructSpec, isTop: boolean, about: string[]): void {
    const name = isTop ? this.spec.name : this.typeName(s.name);
    const L = this.lines;
    L.push(...docComment(about, ''));
    L.push(`export interface ${name} {`);
    for (const f of s.fields) {
      const notes: string[] = [`v${f.versions}`];
      if (!f.nullableVersions.empty) notes.push(`nullable v${f.nullableVersions}`);
      if (!f.taggedVersions.empty) notes.push(`tag ${f.tag} in v${f.taggedVersions}`);
      if (f.default !== undefined) notes.push(`default ${String(f.default)}`);
      if (f.ignorable) notes.push('ignorable');
      if (f.mapKey) notes.push('map key');
      if (f.entityType) notes.push(`entity: ${f.entityType}`);
      L.push(...docComment([`${f.about ?? ''}`, `(${notes.join('; ')})`], '  '));
      L.push(`  ${camel(f.name)}: ${this.fieldTsType(f)};`);
    }
    L.push('  /** Tagged fields this codec does not know, written back unchanged. */');
    L.push('  unknownTaggedFields?: TaggedField[];');
    L.push('}', '');
    L.push(`export function create${name}(init?: Partial<${name}>): ${name} {`);
    L.push(`  return { ${s.fields.map((f) => `${camel(f.name)}: ${this.defaultExpr(f)}`).join(', ')}${s.fields.length ? ', ' : ''}...init };`);
    L.push('}', '');
  }

  emit(): void {
    const top: StructSpec = { name: this.spec.name, fields: this.spec.fields, versions: this.spec.validVersions };
    const nested = [...this.spec.structs.values()];
    this.emitType(top, true, [`${this.spec.name} (${this.spec.file}), versions ${this.spec.validVersions}, flexible ${this.spec.flexibleVersions}.`]);
    for (const s of nested) this.emitType(s, false, [`${this.spec.name}'s ${s.name} struct.`]);
    const writers = this.lines.length;
    this.emitWriter(top, true);
    for (const s of nested) this.emitWriter(s, false);
    const defaults = [...this.defaultInstances].sort().map((n) => `const DEFAULT_${n} = create${n}();`);
    if (defaults.length) this.lines.splice(writers, 0, ...defaults, '');
    this.emitReader(top, true);
    for (const s of nested) this.emitReader(s, false);
    const { name, validVersions: vv } = this.spec;
    const apiKey = this.spec.apiKey ?? -1;
    this.lines.push(
      `/** Writes a ${name} in \`version\` (${vv}). */`,
      `export function encode${name}(w: Writer, message: ${name}, version: number): void {`,
      `  if (version < ${vv.min} || version > ${vv.max}) throw new UnsupportedVersionError(${apiKey}, version);`,
      `  write${name}(w, message, version);`,
      '}',
      '',
      `/** Reads a ${name} of \`version\` (${vv}); check \`r.ok\` or call \`r.complete()\` afterwards. */`,
      `export function decode${name}(r: Reader, version: number): ${name} {`,
      `  if (version < ${vv.min} || version > ${vv.max}) throw new UnsupportedVersionError(${apiKey}, version);`,
      `  return read${name}(r, version);`,
      '}',
      '',
    );
  }
}

function header(specs: MessageSpec[]): string[] {
  return [
    `// Generated by protocol/gen from Kafka's message schemas: ${specs.map((s) => s.file).join(', ')}.`,
    ...specs.flatMap((s) =>
      s.olderVersions ? [`// ${s.name} v${s.olderVersions.versions} from ${s.olderVersions.file}: versions the newer schemas dropped (KIP-896), merged by protocol/gen/merge.ts.`] : [],
    ),
    ...specs.flatMap((s) => s.amendedBy.map((a) => `// ${s.name} amended (protocol/gen/amendments.ts): ${a}.`)),
    '// DO NOT EDIT. Change the generator or the schemas, then run `npm run gen:protocol`.',
    '/* eslint-disable */',
    '',
  ];
}

function imports(emitters: MessageEmitter[], prefix: string, extra: string[] = []): string[] {
  const any = (k: keyof MessageEmitter): boolean => emitters.some((e) => e[k] === true);
  const tagged: string[] = [];
  const taggedTypes = ['TaggedField'];
  if (any('usesTagged')) {
    tagged.push('NO_TAGS', 'writeTagBuffer');
    taggedTypes.push('TaggedWrite');
  }
  if (any('usesDeepEqual')) tagged.push('deepEqual');
  if (any('usesNonNull')) tagged.push('nonNull');
  if (any('usesNotInVersion')) tagged.push('notInVersion');
  const out = [
    ...extra,
    `import { UnsupportedVersionError } from '${prefix}errors.js';`,
    `import type { Reader } from '${prefix}wire/reader.js';`,
    `import type { ${any('usesRecords') ? 'Records, ' : ''}Writer } from '${prefix}wire/writer.js';`,
    `import type { ${taggedTypes.join(', ')} } from '${prefix}wire/tagged.js';`,
  ];
  if (tagged.length) out.push(`import { ${tagged.join(', ')} } from '${prefix}wire/tagged.js';`);
  if (any('usesZeroUuid')) out.push(`import { ZERO_UUID } from '${prefix}wire/uuid.js';`);
  out.push('');
  if (any('usesEmptyBuffer')) out.push('const EMPTY_BUFFER = Buffer.alloc(0);', '');
  return out;
}

function emitMessages(specs: MessageSpec[]): MessageEmitter[] {
  return specs.map((s) => {
    const e = new MessageEmitter(s);
    e.emit();
    return e;
  });
}

function range(v: Versions): string {
  return `{ min: ${v.min}, max: ${v.max} }`;
}

/** Generates every module for a schema set. Paths are relative to `protocol/`. */
export function generate(specs: MessageSpec[]): GeneratedFile[] {
  const files: GeneratedFile[] = [];
  const byKey = new Map<number, { request?: MessageSpec; response?: MessageSpec }>();
  for (const s of specs) {
    if (s.type === 'request' || s.type === 'response') {
      if (s.apiKey === undefined) throw new Error(`${s.file}: ${s.type} without apiKey`);
      const e = byKey.get(s.apiKey) ?? {};
      if (e[s.type]) throw new Error(`${s.file}: second ${s.type} for API key ${s.apiKey}`);
      e[s.type] = s;
      byKey.set(s.apiKey, e);
    }
  }

  const apiModules: { key: number; api: string; path: string }[] = [];
  for (const key of [...byKey.keys()].sort((a, b) => a - b)) {
    const { request, response } = byKey.get(key)!;
    if (!request || !response) throw new Error(`API key ${key} lacks a request or a response schema`);
    const api = request.name.replace(/Request$/, '');
    const emitters = emitMessages([request, response]);
    const path = modulePath(request);
    const vv = request.validVersions;
    const lines = [
      ...header([request, response]),
      ...imports(emitters, '../', [`import type { ApiDescriptor } from '../api.js';`]),
      ...emitters.flatMap((e) => e.lines),
      ...docComment([`${api} (API key ${key}): versions ${vv}, flexible ${request.flexibleVersions}.`], ''),
      `export const ${api}Api: ApiDescriptor<${request.name}, ${response.name}> = {`,
      `  apiKey: ${key},`,
      `  name: '${api}',`,
      `  validVersions: ${range(vv)},`,
      `  firstFlexibleVersion: ${request.flexibleVersions.empty ? 'null' : request.flexibleVersions.min},`,
      `  deprecatedVersions: ${request.deprecatedVersions.empty ? 'null' : range(request.deprecatedVersions)},`,
      `  latestVersionUnstable: ${request.latestVersionUnstable},`,
      `  listeners: [${request.listeners.map((l) => `'${l}'`).join(', ')}],`,
      `  request: { name: '${request.name}', encode: encode${request.name}, decode: decode${request.name}, create: create${request.name} },`,
      `  response: { name: '${response.name}', encode: encode${response.name}, decode: decode${response.name}, create: create${response.name} },`,
      '};',
      '',
    ];
    files.push({ path, content: lines.join('\n') });
    apiModules.push({ key, api, path });
  }

  for (const s of specs) {
    if (s.type !== 'header' && s.type !== 'data') continue;
    const path = modulePath(s);
    const depth = path.split('/').length - 1;
    const emitters = emitMessages([s]);
    const lines = [
      ...header([s]),
      ...imports(emitters, '../'.repeat(depth)),
      ...emitters.flatMap((e) => e.lines),
      `export const ${s.name}Versions = ${range(s.validVersions)};`,
      '',
    ];
    files.push({ path, content: lines.join('\n') });
  }

  const index = [
    ...header(specs.filter((s) => s.type === 'request' || s.type === 'response')),
    `import type { ApiDescriptor } from '../api.js';`,
    ...apiModules.map((m) => `import { ${m.api}Api } from './${m.path.slice('messages/'.length, -3)}.js';`),
    '',
    '/** Every API in the schema set, by ascending API key. */',
    'export const apis: readonly ApiDescriptor[] = [',
    ...apiModules.map((m) => `  ${m.api}Api,`),
    '];',
    '',
    'const byKey = new Map<number, ApiDescriptor>(apis.map((a) => [a.apiKey, a]));',
    '',
    '/** The API with this key, or undefined when the schema set has none. */',
    'export function apiByKey(apiKey: number): ApiDescriptor | undefined {',
    '  return byKey.get(apiKey);',
    '}',
    '',
    'export const ApiKey = {',
    ...apiModules.map((m) => `  ${m.api}: ${m.key},`),
    '} as const;',
    '',
  ];
  files.push({ path: 'messages/index.gen.ts', content: index.join('\n') });
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
