/**
 * Two schema sets as one: a newer Kafka release's schemas (4.4.0/) as the source of every version they
 * define, and an older release's (the top level, 3.9.0) for the versions the newer one dropped.
 *
 * KIP-896 removed the oldest versions of many APIs from Kafka 4.0 (Produce v0-2, Fetch v0-3, ...) and Kafka
 * 4.0 removed the ZooKeeper-era inter-broker APIs outright (their schema files stay, `validVersions: "none"`).
 * Clients older than those releases still send them and Kafka 3.9 answers them, so Ledgerline's codec
 * serves the union: per message the valid versions are both sets' together; a version the newer set
 * defines is laid out as the newer set says, an older one as the older set says.
 *
 * Where both sets define a version they must agree on the wire: the same regular fields in the same order
 * with the same wire types, nullability and encodings, and the newer set's tagged fields a superset of the
 * older's (KIP-482 lets a release add tagged fields to a version). Names may differ (4.x renamed Vote's
 * CandidateId to ReplicaId and TxnOffsetCommit's GenerationId to GenerationIdOrMemberEpoch without a wire
 * change). A disagreement fails generation, except for a version the older release had published as
 * unstable (`latestVersionUnstable`, or one of the early-access schemas in EARLY_ACCESS), whose layout was
 * never a promise: there the newer release's layout is the one Kafka speaks.
 *
 * The merged message is checked against both sources version by version before it is used, so a merge
 * this code gets wrong fails generation instead of producing a codec that reads old versions wrongly.
 */
import { Versions, type FieldSpec, type FieldType, type MessageSpec, type StructSpec } from './schema.js';

/**
 * Older-set versions that Kafka changed incompatibly in a later release because they were early access
 * (never final), by message name: the newer set's layout replaces them without a disagreement.
 */
export const EARLY_ACCESS: ReadonlyMap<string, string> = new Map([
  // KIP-932 share groups were early access before Kafka 4.1; 4.x adds MetadataHash to the v0 record.
  ['ShareGroupMetadataValue', 'KIP-932 share groups were early access in Kafka 3.9'],
  // The share-group state APIs' v0 was unstable in 3.9 (its request says latestVersionUnstable).
  ['ReadShareGroupStateSummaryResponse', 'KIP-932 ReadShareGroupStateSummary v0 was unstable in Kafka 3.9'],
]);

function hull(a: Versions, b: Versions, what: string): Versions {
  if (a.empty) return b;
  if (b.empty) return a;
  const lo = a.min <= b.min ? a : b;
  const hi = lo === a ? b : a;
  if (hi.min > lo.max + 1) throw new Error(`${what}: versions ${a} and ${b} leave a gap`);
  return new Versions(lo.min, Math.max(lo.max, hi.max));
}

function elementStruct(t: FieldType): string | undefined {
  while (t.kind === 'array') t = t.element;
  return t.kind === 'struct' ? t.name : undefined;
}

/** The wire type of a field, with struct names left out (a struct is its fields). */
function wireType(t: FieldType): string {
  return t.kind === 'array' ? `[]${wireType(t.element)}` : t.kind === 'struct' ? 'struct' : t.name;
}

/**
 * What a message puts on the wire in version `v`, as comparable text: one line per regular field (depth,
 * wire type, nullable, compact), and the tagged fields by tag. Field names and doc text are left out.
 */
export function wireLayout(spec: MessageSpec, v: number): { regular: string[]; tagged: Map<number, string> } {
  const regular: string[] = [];
  const tagged = new Map<number, string>();
  const walk = (fields: FieldSpec[], depth: string): void => {
    for (const f of fields) {
      if (!f.versions.contains(v)) continue;
      const compact = (f.flexibleVersions ?? spec.flexibleVersions).contains(v);
      const inner = elementStruct(f.type);
      const sub: string[] = [];
      if (inner) {
        const s = spec.structs.get(inner)!;
        const mark = regular.length;
        walk(s.fields, depth + '.');
        sub.push(...regular.splice(mark));
      }
      const line = `${depth}${wireType(f.type)}${f.nullableVersions.contains(v) ? '?' : ''}${compact ? ' compact' : ''}`;
      if (f.taggedVersions.contains(v)) tagged.set(f.tag!, [`${line} default ${String(f.default)}`, ...sub].join('\n'));
      else regular.push(line, ...sub);
    }
  };
  walk(spec.fields, '');
  if (spec.flexibleVersions.contains(v)) regular.push('tag buffer');
  return { regular, tagged };
}

/** Why `newer` does not carry what `older` wrote in version `v`, or undefined when it does. */
export function wireDisagreement(older: MessageSpec, newer: MessageSpec, v: number): string | undefined {
  const a = wireLayout(older, v);
  const b = wireLayout(newer, v);
  if (a.regular.join('\n') !== b.regular.join('\n')) {
    let i = 0;
    while (a.regular[i] === b.regular[i]) i++;
    return `field ${i + 1} differs: ${a.regular[i] ?? '(none)'} vs ${b.regular[i] ?? '(none)'}`;
  }
  for (const [tag, layout] of a.tagged) {
    if (b.tagged.get(tag) !== layout) return `tagged field ${tag} differs: ${layout} vs ${b.tagged.get(tag) ?? '(none)'}`;
  }
  return undefined;
}

/** `newer`'s versions in the newer set, widened to `older`'s in the versions only the older set has. */
function widen(newer: Versions, older: Versions | undefined, oldOnly: Versions, newMin: number, what: string): Versions {
  const fromNew = newer.intersect(new Versions(newMin, Infinity));
  const fromOld = older ? older.intersect(oldOnly) : Versions.NONE;
  return hull(fromOld, fromNew, what);
}

/** Deprecated versions of both sets, as one range where they join (the newer set's alone where not). */
function deprecated(older: Versions, newer: Versions): Versions {
  try {
    return hull(older, newer, 'deprecated');
  } catch {
    return newer;
  }
}

interface MergeState {
  readonly older: MessageSpec;
  readonly newer: MessageSpec;
  readonly oldOnly: Versions;
  readonly structs: Map<string, StructSpec>;
  readonly done: Set<string>;
}

/** The older set's struct `name` and every struct below it, copied into the merged message. */
function graftStruct(st: MergeState, name: string): void {
  if (st.structs.has(name)) {
    if (st.done.has(name)) return;
    throw new Error(`${st.newer.name}: the older versions' struct ${name} collides with a newer struct`);
  }
  const s = st.older.structs.get(name)!;
  st.structs.set(name, s);
  st.done.add(name);
  for (const f of s.fields) {
    const inner = elementStruct(f.type);
    if (inner) graftStruct(st, inner);
  }
}

function mergeFields(st: MergeState, olderFields: FieldSpec[], newerFields: FieldSpec[], where: string): FieldSpec[] {
  const newMin = st.newer.validVersions.min;
  const out: FieldSpec[] = [];
  for (const nf of newerFields) {
    const of = olderFields.find((f) => f.name === nf.name && !f.versions.intersect(st.oldOnly).empty);
    const what = `${where}.${nf.name}`;
    const merged: FieldSpec = {
      ...nf,
      versions: widen(nf.versions, of?.versions, st.oldOnly, newMin, what),
      nullableVersions: widen(nf.nullableVersions, of?.nullableVersions, st.oldOnly, newMin, `${what} (nullable)`),
      taggedVersions: widen(nf.taggedVersions, of?.taggedVersions, st.oldOnly, newMin, `${what} (tagged)`),
    };
    const ni = elementStruct(nf.type);
    const oi = of ? elementStruct(of.type) : undefined;
    if (of && wireType(of.type) !== wireType(nf.type)) throw new Error(`${what}: type ${wireType(of.type)} in older versions, ${wireType(nf.type)} in newer`);
    if (ni && !st.done.has(ni)) {
      st.done.add(ni);
      const ns = st.newer.structs.get(ni)!;
      const os = oi ? st.older.structs.get(oi) : undefined;
      st.structs.set(ni, { ...ns, fields: os ? mergeFields(st, os.fields, ns.fields, `${where}.${ni}`) : ns.fields });
    }
    out.push(merged);
  }
  // Fields only the dropped versions have (ListOffsets v0's MaxNumOffsets, OffsetCommit v1's CommitTimestamp):
  // kept for those versions, in the older set's order.
  for (let i = 0; i < olderFields.length; i++) {
    const of = olderFields[i]!;
    if (out.some((f) => f.name === of.name)) continue;
    const versions = of.versions.intersect(st.oldOnly);
    if (versions.empty) continue;
    let at = 0;
    for (let j = i - 1; j >= 0; j--) {
      const k = out.findIndex((f) => f.name === olderFields[j]!.name);
      if (k >= 0) {
        at = k + 1;
        break;
      }
    }
    out.splice(at, 0, { ...of, versions, nullableVersions: of.nullableVersions.intersect(st.oldOnly), taggedVersions: of.taggedVersions.intersect(st.oldOnly) });
    const inner = elementStruct(of.type);
    if (inner) graftStruct(st, inner);
  }
  return out;
}

/**
 * Struct versions as the parser computes them, for the merged fields: the versions of the fields holding
 * the struct within their parents' (bounded, for a common struct held by several fields).
 */
function recomputeStructVersions(spec: MessageSpec): void {
  const scope = new Map<string, Versions>();
  const walk = (fields: FieldSpec[], parent: Versions): void => {
    for (const f of fields) {
      const inner = elementStruct(f.type);
      if (!inner) continue;
      const here = f.versions.intersect(parent);
      const was = scope.get(inner);
      const now = was === undefined || was.empty ? here : here.empty ? was : new Versions(Math.min(was.min, here.min), Math.max(was.max, here.max));
      if (was !== undefined && String(was) === String(now)) continue;
      scope.set(inner, now);
      walk(spec.structs.get(inner)!.fields, now);
    }
  };
  walk(spec.fields, spec.validVersions);
  for (const [name, s] of spec.structs) s.versions = scope.get(name) ?? Versions.NONE;
}

/** True when `older`'s version `v` was never final (see EARLY_ACCESS and latestVersionUnstable). */
function unstableInOlder(older: MessageSpec, request: MessageSpec | undefined, v: number): boolean {
  if (EARLY_ACCESS.has(older.name)) return true;
  const api = older.type === 'response' ? request : older;
  return api !== undefined && api.latestVersionUnstable && v === api.validVersions.max;
}

/**
 * One message from both sets. `olderRequest` is the older set's request of the same API (for a response:
 * whether its version was unstable is the request's flag).
 */
export function mergeMessage(older: MessageSpec, newer: MessageSpec, olderRequest?: MessageSpec): MessageSpec {
  if (newer.validVersions.empty) return older; // an API the newer release removed: all of it is the older set's
  if (older.validVersions.empty) return newer;
  const nv = newer.validVersions;
  const ov = older.validVersions;
  if (ov.max < nv.min - 1) throw new Error(`${newer.name}: versions ${ov} and ${nv} leave a gap`);
  const oldOnly = ov.min < nv.min ? new Versions(ov.min, nv.min - 1) : Versions.NONE;

  for (let v = Math.max(ov.min, nv.min); v <= Math.min(ov.max, nv.max); v++) {
    const why = wireDisagreement(older, newer, v);
    if (why && !unstableInOlder(older, olderRequest, v)) {
      throw new Error(`${newer.name} v${v}: ${older.file} and ${newer.file} disagree on the wire (${why})`);
    }
  }
  if (oldOnly.empty) {
    if (ov.max > nv.max) throw new Error(`${newer.name}: the older set has versions ${ov}, the newer only ${nv}`);
    return newer;
  }
  for (let v = oldOnly.min; v <= oldOnly.max; v++) {
    if (older.flexibleVersions.contains(v) !== newer.flexibleVersions.contains(v)) {
      throw new Error(`${newer.name}: flexible versions ${older.flexibleVersions} (older) and ${newer.flexibleVersions} (newer) disagree on v${v}`);
    }
  }
  const st: MergeState = { older, newer, oldOnly, structs: new Map(), done: new Set() };
  const fields = mergeFields(st, older.fields, newer.fields, newer.name);
  for (const [name, s] of newer.structs) if (!st.structs.has(name)) st.structs.set(name, s);
  const merged: MessageSpec = {
    ...newer,
    validVersions: hull(oldOnly, nv, newer.name),
    deprecatedVersions: deprecated(older.deprecatedVersions.intersect(oldOnly), newer.deprecatedVersions),
    olderVersions: { file: older.file, versions: oldOnly },
    fields,
    // In the newer set's order (the emitter writes structs in it), then those only older versions have.
    structs: new Map(
      [...newer.structs.keys(), ...st.structs.keys()].filter((n, i, all) => all.indexOf(n) === i).map((n) => [n, { ...st.structs.get(n)! }]),
    ),
  };
  recomputeStructVersions(merged);

  // The merged message must say exactly what each source says in the versions it takes from it.
  for (let v = oldOnly.min; v <= oldOnly.max; v++) {
    const a = wireLayout(older, v);
    const b = wireLayout(merged, v);
    if (a.regular.join('\n') !== b.regular.join('\n') || [...a.tagged].join() !== [...b.tagged].join()) {
      throw new Error(`${newer.name} v${v}: merged layout differs from ${older.file} (${wireDisagreement(older, merged, v) ?? 'tagged fields'})`);
    }
  }
  for (let v = nv.min; v <= nv.max; v++) {
    const a = wireLayout(newer, v);
    const b = wireLayout(merged, v);
    if (a.regular.join('\n') !== b.regular.join('\n') || [...a.tagged].join() !== [...b.tagged].join()) {
      throw new Error(`${newer.name} v${v}: merged layout differs from ${newer.file} (${wireDisagreement(newer, merged, v) ?? 'tagged fields'})`);
    }
  }
  return merged;
}

/**
 * Both sets as one list: every message of the newer set merged with its older namesake, then the messages
 * only the older set has, in the order of the older set.
 */
export function mergeSchemaSets(older: MessageSpec[], newer: MessageSpec[]): MessageSpec[] {
  // An API is the same API by its key, whatever each release calls it (Kafka 4.1 renamed API key 74
  // ListClientMetricsResources to ListConfigResources, KIP-1142); other messages go by name.
  const id = (s: MessageSpec): string => (s.type === 'request' || s.type === 'response' ? `${s.type} ${s.apiKey}` : s.name);
  const olderByName = new Map(older.map((s) => [id(s), s]));
  const olderRequest = (s: MessageSpec): MessageSpec | undefined =>
    s.type === 'response' ? older.find((o) => o.type === 'request' && o.apiKey === s.apiKey) : undefined;
  const out: MessageSpec[] = [];
  const taken = new Set<string>();
  for (const n of newer) {
    const o = olderByName.get(id(n));
    if (!o) {
      out.push(n);
      continue;
    }
    taken.add(id(o));
    out.push(mergeMessage(o, n, olderRequest(o)));
  }
  for (const o of older) if (!taken.has(id(o))) out.push(o);
  return out;
}
