/**
 * The message model read back from the committed generated modules (protocol/messages/**\/*.gen.ts), so
 * the protocol tests need nothing beside the repository: every message, its versions and flexible
 * versions, and every field of every struct with its wire type, versions, nullable versions and tag.
 *
 * The generated code states all of it in a fixed form (protocol/gen/emit.ts): the message's doc comment
 * (`X (file), versions 0-9, flexible 6+.`), one interface per struct with a note per field
 * (`(v5+; nullable v5+; tag 0 in v12+; ...)`), the TypeScript type of each field, and, where that type
 * does not tell the wire type (`number` is int8 to float64, `string` is also uuid), the writer's call
 * (`w.int16(m.errorCode)`). Where Kafka's schemas are available, generate.test.ts checks that this
 * model equals the schemas' own.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { modulePath } from '../../protocol/gen/emit.js';
import { listGenerated, PROTOCOL_DIR } from '../../protocol/gen/generate.js';
import { Versions, type FieldSpec, type FieldType, type MessageSpec, type PrimitiveType, type StructSpec } from '../../protocol/gen/schema.js';

const TS_PRIMITIVE: Record<string, PrimitiveType | undefined> = {
  boolean: 'bool',
  bigint: 'int64',
  Buffer: 'bytes',
  Records: 'records',
};

/** Wire types the writer names by method (`int16`, `compactNullableString`, ...). */
const WRITER_PRIMITIVE: Record<string, PrimitiveType> = {
  bool: 'bool',
  int8: 'int8',
  int16: 'int16',
  uint16: 'uint16',
  int32: 'int32',
  uint32: 'uint32',
  int64: 'int64',
  float64: 'float64',
  uuid: 'uuid',
  string: 'string',
  bytes: 'bytes',
  records: 'records',
};

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function versions(s: string, where: string): Versions {
  try {
    return Versions.parse(s);
  } catch (e) {
    throw new Error(`${where}: ${(e as Error).message}`);
  }
}

interface ParsedField {
  name: string;
  tsType: string;
  notes: string;
}

interface ParsedInterface {
  name: string;
  fields: ParsedField[];
}

/** Every `export interface` of a module, with each field's TypeScript type and its `(v...)` note. */
function interfaces(source: string, file: string): Map<string, ParsedInterface> {
  const out = new Map<string, ParsedInterface>();
  const lines = source.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^export interface (\w+) \{$/.exec(lines[i]!);
    if (!head) continue;
    const iface: ParsedInterface = { name: head[1]!, fields: [] };
    let doc: string[] = [];
    for (i++; i < lines.length && lines[i] !== '}'; i++) {
      const line = lines[i]!;
      let m: RegExpExecArray | null;
      if ((m = /^ {2}\/\*\* (.*) \*\/$/.exec(line))) doc = [m[1]!];
      else if (line === '  /**') doc = [];
      else if ((m = /^ {3}\* (.*)$/.exec(line))) doc.push(m[1]!);
      else if (line === '   */') continue;
      else if ((m = /^ {2}(\w+): (.+);$/.exec(line))) {
        const notes = /^\((.*)\)$/.exec(doc[doc.length - 1] ?? '');
        if (!notes) throw new Error(`${file}: ${iface.name}.${m[1]} has no version note`);
        iface.fields.push({ name: m[1]!, tsType: m[2]!, notes: notes[1]! });
        doc = [];
      } else if (/^ {2}unknownTaggedFields\?: /.test(line)) doc = [];
      else throw new Error(`${file}: unexpected line in interface ${iface.name}: ${line}`);
    }
    out.set(iface.name, iface);
  }
  return out;
}

/** The body of `function write<name>(...)`, where the writer's calls tell a field's wire type. */
function writerOf(source: string, name: string): string {
  const start = source.indexOf(`\nfunction write${name}(w: Writer, m: ${name}, v: number): void {\n`);
  if (start < 0) return '';
  const end = source.indexOf('\n}\n', start + 1);
  return source.slice(start, end);
}

/** The primitive a writer uses for `m.<field>` (or for its elements, for an array). */
function writtenPrimitive(writer: string, field: string, array: boolean): PrimitiveType | undefined {
  const f = escapeRe(field);
  const re = array
    ? // The element's write may stand in a version branch: `if (v >= 5) {` / `w.compactString(x);`.
      new RegExp(`for \\(const x of (?:nonNull\\()?m\\.${f}\\b[^\\n]*\\n(?:\\s*if \\([^\\n]*\\{\\n)?\\s*w\\.(\\w+)\\(x\\);`)
    : new RegExp(`\\bw\\.(\\w+)\\((?:nonNull\\()?m\\.${f}[,)]`);
  const m = re.exec(writer);
  if (!m) return undefined;
  const method = m[1]!.replace(/^compact/, '').replace(/^Nullable|^nullable/, '');
  return WRITER_PRIMITIVE[method[0]!.toLowerCase() + method.slice(1)];
}

function parseField(p: ParsedField, owner: string, writer: string, structs: ReadonlySet<string>, where: string): FieldSpec {
  const label = `${where}: ${owner}.${p.name}`;
  let ts = p.tsType;
  const nullableType = ts.endsWith(' | null');
  if (nullableType) ts = ts.slice(0, -' | null'.length);
  const typeOf = (t: string, depth: number): FieldType => {
    if (t.endsWith('[]')) return { kind: 'array', element: typeOf(t.slice(0, -2), depth + 1) };
    if (structs.has(t)) return { kind: 'struct', name: t };
    let name = TS_PRIMITIVE[t];
    if (t === 'number' || t === 'string') {
      name = writtenPrimitive(writer, p.name, depth > 0);
      const fits = t === 'number' ? name !== undefined && !['string', 'uuid', 'bytes', 'records', 'bool', 'int64'].includes(name) : name === 'string' || name === 'uuid';
      if (!fits) throw new Error(`${label}: cannot tell the wire type of a ${t} from write${owner}`);
    }
    if (!name) throw new Error(`${label}: unknown type ${t}`);
    return { kind: 'primitive', name };
  };
  const notes = p.notes;
  const first = /^v([^;]+)/.exec(notes);
  if (!first) throw new Error(`${label}: note ${notes} does not start with its versions`);
  const nullable = /(?:^|; )nullable v([^;]+)/.exec(notes);
  const tagged = /(?:^|; )tag (\d+) in v([^;]+)/.exec(notes);
  if (Boolean(nullable) !== nullableType) throw new Error(`${label}: type ${p.tsType} disagrees with note ${notes}`);
  return {
    name: p.name,
    type: typeOf(ts, 0),
    versions: versions(first[1]!, label),
    nullableVersions: nullable ? versions(nullable[1]!, label) : Versions.NONE,
    taggedVersions: tagged ? versions(tagged[2]!, label) : Versions.NONE,
    tag: tagged ? Number(tagged[1]) : undefined,
    flexibleVersions: undefined,
    ignorable: /(?:^|; )ignorable(?:;|$)/.test(notes),
    mapKey: /(?:^|; )map key(?:;|$)/.test(notes),
    entityType: /(?:^|; )entity: ([^;]+)/.exec(notes)?.[1],
    about: undefined,
    default: undefined,
  };
}

function messageType(path: string, name: string): MessageSpec['type'] {
  if (/^messages\/\d{3}-/.test(path)) return name.endsWith('Request') ? 'request' : 'response';
  if (path.startsWith('messages/data/')) return 'data';
  return 'header';
}

/** The messages one generated module defines. */
export function messagesOfModule(path: string, source: string): MessageSpec[] {
  const ifaces = interfaces(source, path);
  const apiKey = /^messages\/(\d{3})-/.exec(path);
  const out: MessageSpec[] = [];
  const tops = source.matchAll(/^\/\*\* (\w+) \(([^)]+)\), versions (\S+), flexible (\S+)\. \*\/\nexport interface (\w+) \{$/gm);
  for (const [, name, file, valid, flexible, iface] of tops) {
    if (name !== iface) throw new Error(`${path}: doc comment of ${name} stands above interface ${iface}`);
    // Struct interfaces say whose they are: `/** FetchResponse's PartitionData struct. */`.
    const structNames = [...source.matchAll(new RegExp(`^/\\*\\* ${escapeRe(name!)}'s \\w+ struct\\. \\*/\\nexport interface (\\w+) \\{$`, 'gm'))].map((m) => m[1]!);
    const known = new Set(structNames);
    const fieldsOf = (owner: string): FieldSpec[] => {
      const it = ifaces.get(owner);
      if (!it) throw new Error(`${path}: no interface ${owner}`);
      const writer = writerOf(source, owner);
      return it.fields.map((f) => parseField(f, owner, writer, known, path));
    };
    const validVersions = versions(valid!, `${path}: ${name}`);
    const structs = new Map<string, StructSpec>();
    for (const s of structNames) structs.set(s, { name: s, fields: fieldsOf(s), versions: validVersions });
    const spec: MessageSpec = {
      file: file!,
      name: name!,
      type: messageType(path, name!),
      apiKey: apiKey ? Number(apiKey[1]) : undefined,
      validVersions,
      flexibleVersions: versions(flexible!, `${path}: ${name}`),
      deprecatedVersions: Versions.NONE,
      latestVersionUnstable: false,
      listeners: [],
      amendedBy: [],
      fields: fieldsOf(name!),
      structs,
    };
    if (modulePath(spec) !== path) throw new Error(`${path}: ${name} read back as belonging in ${modulePath(spec)}`);
    out.push(spec);
  }
  return out;
}

/** Every message of the committed generated code, in the order of their modules. */
export function loadGeneratedModel(): MessageSpec[] {
  const out: MessageSpec[] = [];
  for (const path of listGenerated()) {
    if (path === 'messages/index.gen.ts') continue;
    const specs = messagesOfModule(path, readFileSync(join(PROTOCOL_DIR, path), 'utf8'));
    if (specs.length === 0) throw new Error(`${path}: no message found in it`);
    out.push(...specs);
  }
  return out;
}
