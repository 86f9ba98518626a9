/**
 * Kafka message schemas (clients/src/main/resources/common/message/*.json and the coordinator record schemas):
 * parsing and the model the emitter works from. Works for any schema set of this format; nothing here is
 * tied to one Kafka release.
 *
 * Format reference: Kafka's `generator/src/main/java/org/apache/kafka/message/` (MessageSpec, FieldSpec,
 * Versions, FieldType) and clients/src/main/resources/common/message/README.md.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { mergeSchemaSets } from './merge.js';
import { AMENDMENTS, amend, type Amendment, type SchemaField, type SchemaMessage } from './amendments.js';

/** An inclusive version range; `max` is Infinity for "N+"; `none` is the empty range. */
export class Versions {
  static readonly NONE = new Versions(1, 0);
  constructor(
    readonly min: number,
    readonly max: number,
  ) {}

  static parse(s: string | undefined, dflt: Versions = Versions.NONE): Versions {
    if (s === undefined) return dflt;
    const t = s.trim();
    if (t === 'none') return Versions.NONE;
    let m = /^(\d+)\+$/.exec(t);
    if (m) return new Versions(Number(m[1]), Infinity);
    m = /^(\d+)-(\d+)$/.exec(t);
    if (m) return new Versions(Number(m[1]), Number(m[2]));
    m = /^(\d+)$/.exec(t);
    if (m) return new Versions(Number(m[1]), Number(m[1]));
    throw new Error(`bad version range ${JSON.stringify(s)}`);
  }

  get empty(): boolean {
    return this.min > this.max;
  }

  contains(v: number): boolean {
    return v >= this.min && v <= this.max;
  }

  intersect(o: Versions): Versions {
    const r = new Versions(Math.max(this.min, o.min), Math.min(this.max, o.max));
    return r.empty ? Versions.NONE : r;
  }

  /** True when every version of `within` is in this range. */
  covers(within: Versions): boolean {
    return within.empty || (this.min <= within.min && this.max >= within.max);
  }

  toString(): string {
    if (this.empty) return 'none';
    if (this.max === Infinity) return `${this.min}+`;
    if (this.min === this.max) return `${this.min}`;
    return `${this.min}-${this.max}`;
  }
}

export type PrimitiveType =
  | 'bool'
  | 'int8'
  | 'int16'
  | 'uint16'
  | 'int32'
  | 'uint32'
  | 'int64'
  | 'float64'
  | 'uuid'
  | 'string'
  | 'bytes'
  | 'records';

export type FieldType =
  | { kind: 'primitive'; name: PrimitiveType }
  | { kind: 'struct'; name: string }
  | { kind: 'array'; element: FieldType };

export interface FieldSpec {
  /** Kafka's name, e.g. `GroupInstanceId`. */
  name: string;
  type: FieldType;
  versions: Versions;
  nullableVersions: Versions;
  taggedVersions: Versions;
  tag: number | undefined;
  /** Per-field override of the message's flexible versions (RequestHeader.ClientId is never compact). */
  flexibleVersions: Versions | undefined;
  ignorable: boolean;
  mapKey: boolean;
  entityType: string | undefined;
  about: string | undefined;
  /** Raw default from the schema, if any (string or number). */
  default: string | number | boolean | undefined;
}

export interface StructSpec {
  name: string;
  fields: FieldSpec[];
  /** Versions in which this struct can appear (the versions of the field that holds it, or the message's). */
  versions: Versions;
}

export interface MessageSpec {
  /** Schema file path relative to the schema root, with `/` separators. */
  file: string;
  name: string;
  type: 'request' | 'response' | 'header' | 'data';
  apiKey: number | undefined;
  validVersions: Versions;
  flexibleVersions: Versions;
  deprecatedVersions: Versions;
  latestVersionUnstable: boolean;
  listeners: string[];
  /** The amendments (protocol/gen/amendments.ts) applied to the schema, by their source. */
  amendedBy: string[];
  /** Versions laid out from an older schema set's file (merge.ts: those a newer Kafka release dropped). */
  olderVersions?: { file: string; versions: Versions };
  fields: FieldSpec[];
  /** Every struct of the message, nested and common, by name (Kafka requires names unique per message). */
  structs: Map<string, StructSpec>;
}

/** Strips `//` line comments that stand outside strings (Kafka's schemas are JSON with comments). */
export function stripJsonComments(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else {
      out += c;
    }
  }
  return out;
}

const PRIMITIVES = new Set<string>([
  'bool',
  'int8',
  'int16',
  'uint16',
  'int32',
  'uint32',
  'int64',
  'float64',
  'uuid',
  'string',
  'bytes',
  'records',
]);

function parseType(t: string): FieldType {
  if (t.startsWith('[]')) return { kind: 'array', element: parseType(t.slice(2)) };
  if (PRIMITIVES.has(t)) return { kind: 'primitive', name: t as PrimitiveType };
  if (!/^[A-Z][A-Za-z0-9]*$/.test(t)) throw new Error(`unknown field type ${JSON.stringify(t)}`);
  return { kind: 'struct', name: t };
}

export function parseMessage(file: string, text: string, amendments: readonly Amendment[] = AMENDMENTS): MessageSpec {
  const raw = JSON.parse(stripJsonComments(text)) as SchemaMessage;
  if (raw.type === 'coordinator-key' || raw.type === 'coordinator-value') asCoordinatorData(file, raw);
  const amendedBy = amend(file, raw, amendments);
  const validVersions = Versions.parse(raw.validVersions);
  const structs = new Map<string, StructSpec>();

  const addStruct = (name: string, versions: Versions, rawFields: SchemaField[]): void => {
    if (structs.has(name)) throw new Error(`${file}: duplicate struct ${name}`);
    const spec: StructSpec = { name, versions, fields: [] };
    structs.set(name, spec);
    spec.fields = rawFields.map((f) => parseField(f, versions));
  };

  const parseField = (f: SchemaField, parentVersions: Versions): FieldSpec => {
    // A field that only ever travels tagged may leave out `versions` (Kafka 4.4's StreamsGroupMetadataValue
    // LastAssignmentConfigs): it exists in its tagged versions.
    const rawVersions = f.versions ?? f.taggedVersions;
    if (rawVersions === undefined) throw new Error(`${file}: field ${f.name} has no versions`);
    const versions = Versions.parse(rawVersions);
    const type = parseType(f.type);
    const taggedVersions = Versions.parse(f.taggedVersions);
    if (f.tag !== undefined && taggedVersions.empty) throw new Error(`${file}: ${f.name} has a tag but no taggedVersions`);
    if (f.fields) {
      const inner = type.kind === 'array' ? type.element : type;
      if (inner.kind !== 'struct') throw new Error(`${file}: ${f.name} has fields but type ${f.type}`);
      addStruct(inner.name, versions.intersect(parentVersions), f.fields);
    }
    return {
      name: f.name,
      type,
      versions,
      nullableVersions: Versions.parse(f.nullableVersions),
      taggedVersions,
      tag: f.tag === undefined ? undefined : Number(f.tag), // some schemas quote it ("tag": "0")
      flexibleVersions: f.flexibleVersions === undefined ? undefined : Versions.parse(f.flexibleVersions),
      ignorable: f.ignorable === true,
      mapKey: f.mapKey === true,
      entityType: f.entityType,
      about: f.about,
      // A JSON null default means the same as Kafka's "null" string default.
      default: f.default === null ? 'null' : f.default,
    };
  };

  // A removed API keeps its schema file with `validVersions: "none"` and no fields (Kafka 4.0's LeaderAndIsr).
  const fields = (raw.fields ?? []).map((f) => parseField(f, validVersions));
  for (const c of raw.commonStructs ?? []) addStruct(c.name, Versions.parse(c.versions), c.fields);

  // Every struct a field names must be defined in the message.
  const check = (fs: FieldSpec[]): void => {
    for (const f of fs) {
      let t = f.type;
      while (t.kind === 'array') t = t.element;
      if (t.kind === 'struct' && !structs.has(t.name)) throw new Error(`${file}: ${f.name} names unknown struct ${t.name}`);
    }
  };
  check(fields);
  for (const s of structs.values()) check(s.fields);

  return {
    file,
    name: raw.name,
    type: raw.type as MessageSpec['type'], // coordinator records are `data` by now (asCoordinatorData)
    apiKey: raw.apiKey,
    validVersions,
    flexibleVersions: Versions.parse(raw.flexibleVersions, Versions.NONE),
    deprecatedVersions: Versions.parse(raw.deprecatedVersions),
    latestVersionUnstable: raw.latestVersionUnstable === true,
    listeners: raw.listeners ?? [],
    amendedBy,
    fields,
    structs,
  };
}

/**
 * Kafka 4 states a coordinator record's type as the `apiKey` of its key and value schemas (`coordinator-key`,
 * `coordinator-value`) and versions the key's layout from 0; Kafka 3 wrote the type as the key's version
 * (ConsumerGroupMetadataKey was `data` with `validVersions: "3"`). Both put the same bytes on disk: the
 * int16 before a key is its record type (Kafka's CoordinatorRecordSerde), then the key. The generated code
 * keeps Kafka 3's form, which is the one the bytes say: a key's version is its record type, so a key schema
 * of either release describes the same module and the two can be merged (merge.ts). Values keep their own
 * versions; both become `data`.
 */
function asCoordinatorData(file: string, raw: SchemaMessage): void {
  if (raw.type === 'coordinator-key') {
    const type = raw.apiKey;
    if (type === undefined || raw.validVersions !== '0') throw new Error(`${file}: a coordinator key needs an apiKey and validVersions "0"`);
    const retag = (fields: SchemaField[] | undefined): void => {
      for (const f of fields ?? []) {
        for (const k of ['versions', 'nullableVersions'] as const) {
          const v = f[k];
          if (v === undefined || v === 'none') continue;
          if (v !== '0' && v !== '0+') throw new Error(`${file}: coordinator key field ${f.name} has versions ${v}`);
          f[k] = String(type);
        }
        retag(f.fields);
      }
    };
    retag(raw.fields);
    for (const c of raw.commonStructs ?? []) retag(c.fields);
    raw.validVersions = String(type);
  }
  raw.type = 'data';
  delete raw.apiKey;
}

/** A folder named after a Kafka release (`4.4.0/`) holds a newer schema set kept beside this one. */
export const RELEASE_FOLDER = /^\d+\.\d+\.\d+$/;

/** Reads every `*.json` schema below `dir`, in a stable order, leaving release folders out. */
function readSchemaSet(root: string, dir: string): MessageSpec[] {
  const files: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        if (!RELEASE_FOLDER.test(name)) walk(p);
      } else if (name.endsWith('.json')) files.push(p);
    }
  };
  walk(dir);
  if (files.length === 0) throw new Error(`no *.json schemas below ${dir}`);
  return files.map((p) => parseMessage(relative(root, p).split(sep).join('/'), readFileSync(p, 'utf8')));
}

/** The release folders directly below `root`, newest last. */
export function releaseFolders(root: string): string[] {
  const num = (n: string): number[] => n.split('.').map(Number);
  const cmp = (a: string, b: string): number => {
    const [x, y] = [num(a), num(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
    return 0;
  };
  return readdirSync(root)
    .filter((n) => RELEASE_FOLDER.test(n) && statSync(join(root, n)).isDirectory())
    .sort(cmp);
}

/**
 * The schema set below `root`. When `root` holds a release folder (`4.4.0/`), the newest one is the source of
 * every version it defines and the top level's schemas (an older release's) supply the versions it dropped
 * (merge.ts); other release folders are not read. File names are relative to `root`.
 */
export function loadSchemas(root: string): MessageSpec[] {
  const older = readSchemaSet(root, root);
  const newest = releaseFolders(root).at(-1);
  if (newest === undefined) return older;
  return mergeSchemaSets(older, readSchemaSet(root, join(root, newest)));
}
