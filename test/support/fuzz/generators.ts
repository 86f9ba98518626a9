/**
 * Structure-aware request generation: walks the schema model of a request (protocol/gen's MessageSpec)
 * for one version and fills every field the version has. Values are shaped by the field's name and place
 * (topic names from the topics that exist, partition indexes that exist, group ids from a small pool,
 * record sets that are real batches, short timeouts) so most requests get past parsing into the handlers;
 * then, with a per-field probability, a value is replaced by an adversarial one of the same type (the
 * field-level mutations: extremes, nulls, strings over 32,767 bytes, huge arrays, unknown tagged fields).
 * Every mutation is logged with its path so a finding names what was changed.
 */
import { camel, structTypeName } from '../../../protocol/gen/emit.js';
import type { FieldSpec, FieldType, StructSpec } from '../../../protocol/gen/schema.js';
import { uuidFromBytes, ZERO_UUID } from '../../../protocol/wire/uuid.js';
import type { RequestSchema } from './schemas.js';
import type { Prng } from './prng.js';
import type { FuzzBatch } from './records.js';

export interface TopicRef {
  name: string;
  id: string;
  partitions: number;
}

/** What the generator may refer to: things that exist on the broker, and prepared record sets. */
export interface World {
  topics: TopicRef[];
  groups: string[];
  validBatches: Buffer[];
  brokenBatches: FuzzBatch[];
  /** A decompression bomb per codec. */
  bombs: Buffer[];
}

export interface GenerateOptions {
  /** Probability that a leaf or array field gets an adversarial value. */
  mutationRate: number;
  /** Mutations applied, as `path: description`. */
  log: string[];
}

/** Config names worth setting on topics; retention settings are left out so the seed data survives. */
const CONFIG_NAMES = ['cleanup.policy', 'max.message.bytes', 'segment.bytes', 'compression.type', 'message.timestamp.type', 'min.insync.replicas', 'segment.ms', 'no.such.config', ''];
const CONFIG_VALUES = ['delete', 'compact', '1', '0', '-1', '1048576', 'producer', 'gzip', 'LogAppendTime', 'not-a-number', '9223372036854775808', ''];
const REGEXES = ['fuzz-.*', '.*', '(', '[a-', 'fuzz-(0|1)', '(a+)+$'];
const ASSIGNORS = ['range', 'uniform', 'roundrobin', 'sticky', 'no-such-assignor'];

function huge(n: number): string {
  return 'x'.repeat(n);
}

export function generateRequest(rng: Prng, msg: RequestSchema, version: number, world: World, opts: GenerateOptions): Record<string, unknown> {
  const spec = msg.spec;
  const flexible = spec.flexibleVersions.contains(version);

  // Elements repeated by a 'many' mutation are generated unmutated, so a huge array of huge strings (gigabytes
  // in the test process) cannot happen: the array is the mutation.
  let quiet = 0;
  const mutate = (): boolean => quiet === 0 && opts.mutationRate > 0 && rng.chance(opts.mutationRate);

  const topic = (): TopicRef => rng.pick(world.topics);

  const strValue = (f: FieldSpec, struct: string): string => {
    const n = f.name;
    if (/config/i.test(struct) && (n === 'Name' || n === 'ConfigurationKeys' || n === 'ConfigNames')) return rng.pick(CONFIG_NAMES);
    if (/config/i.test(struct) && n === 'Value') return rng.pick(CONFIG_VALUES);
    if (/topic/i.test(n) || (n === 'Name' && /topic/i.test(struct)) || n === 'ResourceName') {
      if (n === 'ResourceName' && rng.chance(0.3)) return rng.pick(['1', '', '0']);
      if (/regex/i.test(n)) return rng.pick(REGEXES);
      // Topics to create get fresh names, so CreateTopics reaches its partition counts and configs.
      if (/Creatable/.test(struct)) return rng.chance(0.8) ? `fuzz-new-${rng.u32().toString(36)}` : topic().name;
      return rng.chance(0.9) ? topic().name : `fuzz-new-${rng.int(50)}`;
    }
    if (/GroupId$/.test(n) || n === 'Groups' || n === 'GroupsNames') return rng.pick(world.groups);
    if (n === 'MemberId') return rng.chance(0.7) ? '' : `member-${rng.int(5)}`;
    if (n === 'GroupInstanceId') return `instance-${rng.int(3)}`;
    if (n === 'ProtocolType') return rng.chance(0.8) ? 'consumer' : rng.pick(['', 'connect', 'x']);
    if ((n === 'Name' && /protocol/i.test(struct)) || n === 'ProtocolName' || /Assignor/.test(n)) return rng.pick(ASSIGNORS);
    if (n === 'ClientSoftwareName' || n === 'ClientSoftwareVersion') return rng.chance(0.8) ? 'fuzz-1.0' : rng.pick(['', '-bad-', 'a b']);
    if (n === 'TransactionalId') return `txn-${rng.int(3)}`;
    if (/States?Filter/.test(n)) return rng.pick(['Stable', 'Empty', 'PreparingRebalance', 'Dead', 'bogus']);
    if (/TypesFilter/.test(n)) return rng.pick(['classic', 'consumer', 'share', 'bogus']);
    const len = rng.int(12);
    let s = '';
    for (let i = 0; i < len; i++) s += String.fromCharCode(rng.range(0x61, 0x7a));
    return s;
  };

  const intValue = (f: FieldSpec, bits: 8 | 16 | 32): number => {
    const n = f.name;
    if (/^(PartitionIndex|Partition|PartitionId|Partitions)$/.test(n)) return rng.chance(0.9) ? rng.int(3) : rng.int(8);
    if (n === 'Acks') return rng.weighted([[6, -1], [3, 1], [1, 0]]);
    if (n === 'MaxWaitMs' || n === 'TimeoutMs' || n === 'RebalanceTimeoutMs') return rng.int(100);
    if (n === 'SessionTimeoutMs') return rng.pick([6000, 10000, 45000, 1]);
    if (n === 'NumPartitions' || n === 'Count') return rng.chance(0.8) ? rng.range(1, 4) : -1;
    if (n === 'ReplicationFactor') return rng.chance(0.8) ? 1 : -1;
    if (/MaxBytes$/.test(n)) return rng.int(1 << 20);
    if (n === 'MinBytes') return rng.int(2);
    if (/Epoch$|GenerationId$/.test(n)) return rng.range(-1, 3);
    if (n === 'SessionId') return 0;
    if (n === 'ReplicaId' || n === 'BrokerId' || n === 'LeaderId') return rng.pick([-1, 1]);
    if (n === 'ResourceType') return rng.pick([2, 4, 0, 1, 3, 8]);
    if (n === 'IsolationLevel' || n === 'KeyType') return rng.int(2);
    if (n === 'ConfigOperation') return rng.int(4);
    if (rng.chance(0.8)) return rng.int(10);
    const span = 2 ** bits;
    return rng.int(span) - span / 2;
  };

  const int64Value = (f: FieldSpec): bigint => {
    const n = f.name;
    if (n === 'ProducerId') return rng.chance(0.8) ? -1n : BigInt(rng.int(100));
    if (n === 'Timestamp') return rng.pick([-1n, -2n, -3n, BigInt(Date.now()), 0n]);
    if (rng.chance(0.85)) return BigInt(rng.range(-1, 20));
    return rng.int64();
  };

  const extremeInt = (bits: 8 | 16 | 32, unsigned = false): number => {
    const max = unsigned ? 2 ** bits - 1 : 2 ** (bits - 1) - 1;
    const min = unsigned ? 0 : -(2 ** (bits - 1));
    // Besides the edges, counts that are valid numbers but cost the broker a great deal if it believes them.
    return rng.pick([min, max, -1, 0, 1, max - 1, min + 1, 1000, 100_000, 1_000_000].filter((v) => v >= min && v <= max));
  };

  const primitive = (f: FieldSpec, name: string, struct: string, path: string, nullable: boolean): unknown => {
    const m = mutate();
    if (m && nullable && rng.chance(0.4)) {
      opts.log.push(`${path}: null`);
      return null;
    }
    switch (name) {
      case 'bool':
        return rng.chance(0.5);
      case 'int8':
      case 'int16':
      case 'int32':
      case 'uint16':
      case 'uint32': {
        const bits = name === 'int8' ? 8 : name.endsWith('16') ? 16 : 32;
        if (m) {
          const v = extremeInt(bits, name.startsWith('u'));
          opts.log.push(`${path}: ${v}`);
          return v;
        }
        const v = intValue(f, bits);
        return name.startsWith('u') ? Math.abs(v) : v;
      }
      case 'int64':
        if (m) {
          const v = rng.pick([-(2n ** 63n), 2n ** 63n - 1n, -1n, -2n, 2n ** 53n, rng.int64()]);
          opts.log.push(`${path}: ${v}`);
          return v;
        }
        return int64Value(f);
      case 'float64':
        return m ? rng.pick([Number.MAX_VALUE, -Infinity, NaN, -0]) : rng.float();
      case 'uuid':
        if (m) {
          const v = rng.pick([ZERO_UUID, uuidFromBytes(Buffer.alloc(16, 0xff)), uuidFromBytes(rng.bytes(16))]);
          opts.log.push(`${path}: uuid ${v}`);
          return v;
        }
        if (/TopicId/.test(f.name)) return rng.chance(0.85) ? topic().id : rng.chance(0.5) ? ZERO_UUID : uuidFromBytes(rng.bytes(16));
        return uuidFromBytes(rng.bytes(16));
      case 'string':
        if (m) {
          // Over 32,767 bytes only fits a compact (flexible) string; in other versions the encoder refuses it
          // and the case falls back to a smaller mutation.
          const v = rng.weighted<() => string>([
            [3, () => ''],
            [3, () => huge(rng.pick([32_767, 32_768, 40_000, 70_000]))],
            [2, () => huge(rng.pick([249, 250, 256, 1000]))],
            [2, () => rng.pick(['..', '.', '__consumer_offsets', 'a/b', 'bad name', '\u0000', '\ud83d\udca5'.repeat(20), 'ü'.repeat(300)])],
          ])();
          opts.log.push(`${path}: ${v.length > 40 ? `${JSON.stringify(v.slice(0, 8))}…(${Buffer.byteLength(v)} bytes)` : JSON.stringify(v)}`);
          return v;
        }
        return strValue(f, struct);
      case 'bytes':
        if (m) {
          const v = rng.pick([Buffer.alloc(0), rng.bytes(rng.int(4096)), Buffer.alloc(100_000, 0x41)]);
          opts.log.push(`${path}: ${v.length} bytes`);
          return v;
        }
        return rng.bytes(rng.int(32));
      case 'records':
        if (m) {
          const b = rng.weighted<() => Buffer>([
            [5, () => {
              const fb = rng.pick(world.brokenBatches);
              opts.log.push(`${path}: batch codec ${fb.codec} ${fb.variant}`);
              return fb.bytes;
            }],
            [1, () => {
              const bomb = rng.pick(world.bombs);
              opts.log.push(`${path}: decompression bomb (${bomb.length} bytes)`);
              return bomb;
            }],
            [1, () => {
              opts.log.push(`${path}: random bytes`);
              return rng.bytes(rng.int(300));
            }],
          ])();
          return b;
        }
        return Buffer.concat(Array.from({ length: rng.range(1, 2) }, () => rng.pick(world.validBatches)));
    }
    throw new Error(`no generator for ${name}`);
  };

  const value = (f: FieldSpec, t: FieldType, struct: string, path: string, depth: number, nullable: boolean): unknown => {
    if (t.kind === 'primitive') return primitive(f, t.name, struct, path, nullable);
    if (t.kind === 'struct') return structValue(spec.structs.get(t.name)!, structTypeName(spec, t.name), path, depth + 1);
    // Arrays.
    if (mutate()) {
      const how = rng.weighted<string>([[2, 'null'], [2, 'empty'], [3, 'many'], [2, 'duplicate']]);
      if (how === 'null' && nullable) {
        opts.log.push(`${path}: null array`);
        return null;
      }
      if (how === 'many' || how === 'duplicate') {
        const n = how === 'many' ? rng.pick(depth > 1 ? [100, 1000] : [100, 1000, 10_000, 30_000]) : 2;
        quiet++;
        const one = value(f, t.element, struct, `${path}[0]`, depth + 1, false);
        quiet--;
        opts.log.push(`${path}: ${n} copies of one element`);
        return Array.from({ length: n }, () => one);
      }
      opts.log.push(`${path}: empty array`);
      return [];
    }
    // Optional lists (manual replica assignments, configs) are mostly left empty: a CreateTopics with both a
    // partition count and an assignment is refused before its partition count is looked at.
    const optional = /^(Assignments|Configs|ForgottenTopicsData|Tags)$/.test(f.name);
    const n = depth > 3 ? 0 : optional && rng.chance(0.7) ? 0 : rng.weighted([[1, 0], [6, 1], [3, 2], [1, 3]]);
    return Array.from({ length: n }, (_, i) => value(f, t.element, struct, `${path}[${i}]`, depth + 1, false));
  };

  const structValue = (s: Pick<StructSpec, 'fields' | 'name'>, typeName: string, path: string, depth: number): Record<string, unknown> => {
    const create = msg.module[`create${typeName}`] as () => Record<string, unknown>;
    const m = create();
    for (const f of s.fields) {
      if (!f.versions.contains(version)) continue;
      m[camel(f.name)] = value(f, f.type, s.name, path ? `${path}.${f.name}` : f.name, depth, f.nullableVersions.contains(version));
    }
    if (flexible && mutate()) {
      const tags = Array.from({ length: rng.range(1, 3) }, () => ({
        tag: rng.pick([0, 1, 2, 3, rng.range(4, 100), 0x7fffffff, rng.int(1 << 20)]),
        data: rng.bytes(rng.pick([0, 1, 8, 300])),
      })).sort((a, b) => a.tag - b.tag);
      opts.log.push(`${path || '<root>'}: unknown tagged fields ${tags.map((t) => `${t.tag}(${t.data.length})`).join(',')}`);
      m.unknownTaggedFields = tags;
    }
    return m;
  };

  return structValue(spec, spec.name, '', 0);
}
