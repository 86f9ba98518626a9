/**
 * Versions that Kafka releases after the schema set added to its messages, written as differences from it.
 *
 * When the generator had only Kafka 3.9.0's schemas, three amendments stood here, for versions Kafka 4
 * clients send that 3.9.0 does not define: ConsumerGroupHeartbeat v1 (SubscribedTopicRegex, KIP-848;
 * consumer-generated member ids, KIP-1082), ConsumerGroupDescribe v1 (MemberType, KIP-1099) and
 * DescribeGroups v6 (ErrorMessage and GROUP_ID_NOT_FOUND, KIP-1043). Kafka 4.4.0's own schemas (the
 * `4.4.0/` release folder, merge.ts) define all three, with the layouts the amendments had and the golden
 * fixtures under test/golden/ pin, so none is needed now and AMENDMENTS is empty.
 *
 * The mechanism stays for the next such gap: an amendment names the release and KIP it comes from and
 * states the wire change in Kafka's schema vocabulary, checked against that release's generated classes.
 * It applies only when the schema set stops below its versions, so a schema set that has the versions
 * itself supersedes it and the generated code comes from that set alone.
 */
import { Versions } from './schema.js';

/** A field as written in a Kafka JSON schema. */
export interface SchemaField {
  name: string;
  type: string;
  versions?: string;
  nullableVersions?: string;
  taggedVersions?: string;
  tag?: number;
  flexibleVersions?: string;
  ignorable?: boolean;
  mapKey?: boolean;
  entityType?: string;
  about?: string;
  default?: string | number | boolean | null;
  fields?: SchemaField[];
}

/** A message as written in a Kafka JSON schema. */
export interface SchemaMessage {
  name: string;
  type: 'request' | 'response' | 'header' | 'data' | 'coordinator-key' | 'coordinator-value';
  apiKey?: number;
  validVersions: string;
  flexibleVersions: string;
  deprecatedVersions?: string;
  latestVersionUnstable?: boolean;
  listeners?: string[];
  /** Absent in the schema of an API a release removed (`validVersions: "none"`). */
  fields?: SchemaField[];
  commonStructs?: { name: string; versions: string; fields: SchemaField[] }[];
}

export interface Amendment {
  /** The message amended, e.g. `ConsumerGroupHeartbeatRequest`. */
  readonly message: string;
  /** The release and KIP the versions come from, as it appears in the generated code. */
  readonly source: string;
  /** The message's valid versions once amended. */
  readonly validVersions: string;
  /** Fields the new versions add: into `struct` (null: the message's top level), right after field `after`. */
  readonly addFields?: readonly { readonly struct: string | null; readonly after: string; readonly field: SchemaField }[];
}

export const AMENDMENTS: readonly Amendment[] = [];

/**
 * Applies the amendments for `raw` (in place) and returns the sources of those applied. An amendment is
 * skipped when the schema already covers its versions; one that no longer fits the schema (a missing struct
 * or anchor field, a field already there) is an error rather than a silent skip.
 */
export function amend(file: string, raw: SchemaMessage, amendments: readonly Amendment[] = AMENDMENTS): string[] {
  const applied: string[] = [];
  for (const a of amendments) {
    if (a.message !== raw.name) continue;
    const wanted = Versions.parse(a.validVersions);
    const have = Versions.parse(raw.validVersions);
    if (have.max >= wanted.max) continue;
    if (have.min !== wanted.min) throw new Error(`${file}: amendment expects versions from ${wanted.min}, schema has ${have}`);
    for (const add of a.addFields ?? []) {
      const fields = add.struct === null ? (raw.fields ??= []) : structFields(raw, add.struct);
      if (!fields) throw new Error(`${file}: amendment names unknown struct ${add.struct}`);
      if (fields.some((f) => f.name === add.field.name)) throw new Error(`${file}: ${add.field.name} already exists`);
      const at = fields.findIndex((f) => f.name === add.after);
      if (at < 0) throw new Error(`${file}: amendment anchor ${add.after} not found`);
      fields.splice(at + 1, 0, structuredClone(add.field));
    }
    raw.validVersions = a.validVersions;
    applied.push(a.source);
  }
  return applied;
}

/** The field list of a struct of `raw`, nested or common, by name. */
function structFields(raw: SchemaMessage, name: string): SchemaField[] | undefined {
  const common = raw.commonStructs?.find((c) => c.name === name);
  if (common) return common.fields;
  const search = (fields: SchemaField[]): SchemaField[] | undefined => {
    for (const f of fields) {
      if (!f.fields) continue;
      if (f.type === name || f.type === `[]${name}`) return f.fields;
      const inner = search(f.fields);
      if (inner) return inner;
    }
    return undefined;
  };
  return search(raw.fields ?? []);
}
