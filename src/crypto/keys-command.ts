/**
 * `ledgerline keys`: make and rotate key pairs for end-to-end encryption, and show which keys a topic's
 * recent records need (README "The key command").
 *
 *   ledgerline keys generate <id> --dir DIR [--type rsa|x25519|secret] [--bits 3072]
 *   ledgerline keys rotate <name> --dir DIR [--bits 3072]
 *   ledgerline keys list --dir DIR
 *   ledgerline keys needed --bootstrap-server HOST:PORT --topic T [--records 1000]
 *
 * `needed` reads the last records of every partition (only the envelopes' clear fields: key ids and data
 * key ids; it holds no key) and prints, per recipient key id, how many of those records it can open.
 */
import { readdir } from 'node:fs/promises';
import { OffsetSpec, KafkaClient } from '../client/index.js';
import { splitRecordBatches } from '../../protocol/records/split.js';
import { decodeEnvelope, ENVELOPE_HEADER } from './envelope.js';
import { generateKey, keyVersions, rotateKey, type KeyType } from './keys.js';
import { KEYS_USAGE } from './keys-usage.js';


class UsageError extends Error {}

function parse(args: string[]): { positional: string[]; flags: Map<string, string> } {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    const value = eq >= 0 ? a.slice(eq + 1) : args[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { positional, flags };
}

function required(flags: Map<string, string>, name: string): string {
  const v = flags.get(name);
  if (v === undefined) throw new UsageError(`--${name} is required`);
  return v;
}

function positiveInt(flags: Map<string, string>, name: string, dflt: number): number {
  const v = flags.get(name);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** What `needed` found: per recipient key id, the records wrapped for it; and the records that reference or are plaintext. */
export interface NeededKeys {
  readonly records: number;
  readonly plaintext: number;
  /** Records carrying no wrapped key (referencing a data key announced earlier). */
  readonly references: number;
  readonly malformed: number;
  readonly byKeyId: ReadonlyMap<string, number>;
  readonly dataKeys: number;
}

/** Scans the last `perPartition` records of each partition of `topic`. */
export async function neededKeys(bootstrap: string, topic: string, perPartition: number): Promise<NeededKeys> {
  const client = await KafkaClient.connect({ bootstrap, clientId: 'ledgerline-keys' });
  try {
    const md = await client.metadata([topic]);
    const t = md.topics.find((x) => x.name === topic);
    if (!t || t.errorCode !== 0) throw new Error(`topic ${topic} not found (error ${t?.errorCode ?? 'none'})`);
    const partitions = t.partitions.map((p) => p.partitionIndex);
    const [ends, starts] = await Promise.all([
      client.listOffsets(partitions.map((partition) => ({ topic, partition, timestamp: OffsetSpec.LATEST }))),
      client.listOffsets(partitions.map((partition) => ({ topic, partition, timestamp: OffsetSpec.EARLIEST }))),
    ]);
    const byKeyId = new Map<string, number>();
    const dataKeys = new Set<string>();
    let records = 0;
    let plaintext = 0;
    let references = 0;
    let malformed = 0;
    for (let i = 0; i < partitions.length; i++) {
      const end = ends[i]!.offset;
      let offset = end - BigInt(perPartition) > starts[i]!.offset ? end - BigInt(perPartition) : starts[i]!.offset;
      while (offset < end) {
        const [f] = await client.fetch([{ topic, partition: partitions[i]!, offset }], { maxWaitMs: 0 });
        if (!f || f.errorCode !== 0) throw new Error(`fetch of ${topic}-${partitions[i]} failed with error ${f?.errorCode}`);
        const batches = f.records === null ? [] : splitRecordBatches(f.records);
        if (batches.length === 0) break;
        for (const batch of batches) {
          if (batch.isControl) continue;
          for (const r of await batch.readRecords()) {
            if (BigInt(r.offset) < offset) continue;
            records++;
            const h = r.headers.filter((x) => x.key === ENVELOPE_HEADER);
            if (h.length === 0) {
              plaintext++;
              continue;
            }
            try {
              const env = decodeEnvelope(h[0]!.value ?? Buffer.alloc(0));
              dataKeys.add(env.dataKeyId.toString('hex'));
              if (env.wrappedKeys.length === 0) references++;
              for (const w of env.wrappedKeys) byKeyId.set(w.keyId, (byKeyId.get(w.keyId) ?? 0) + 1);
            } catch {
              malformed++;
            }
          }
        }
        offset = batches[batches.length - 1]!.lastOffset + 1n;
      }
    }
    return { records, plaintext, references, malformed, byKeyId, dataKeys: dataKeys.size };
  } finally {
    await client.close();
  }
}

/** Runs `ledgerline keys ...`; returns the exit status. */
export async function keysCommand(args: string[], out: (line: string) => void = console.log): Promise<number> {
  const [sub, ...rest] = args;
  try {
    const { positional, flags } = parse(rest);
    switch (sub) {
      case 'generate': {
        const id = positional[0];
        if (id === undefined) throw new UsageError('generate needs a key id');
        const type = (flags.get('type') ?? 'x25519') as KeyType;
        if (!['rsa', 'x25519', 'secret'].includes(type)) throw new UsageError(`--type must be rsa, x25519 or secret, got ${type}`);
        for (const f of await generateKey(required(flags, 'dir'), id, type, positiveInt(flags, 'bits', 3072))) out(f);
        return 0;
      }
      case 'rotate': {
        const name = positional[0];
        if (name === undefined) throw new UsageError('rotate needs a key name');
        const r = await rotateKey(required(flags, 'dir'), name, positiveInt(flags, 'bits', 3072));
        out(`${r.keyId}`);
        for (const f of r.files) out(f);
        return 0;
      }
      case 'list': {
        const dir = required(flags, 'dir');
        const names = new Set<string>();
        for (const f of await readdir(dir)) {
          const m = /^(.*?)(\.v\d+)?\.(pub\.pem|secret)$/.exec(f);
          if (m) names.add(m[1]!);
        }
        for (const name of [...names].sort()) {
          const v = await keyVersions(dir, name);
          out(`${name}\t${v.type}\t${v.ids.join(' ')}`);
        }
        return 0;
      }
      case 'needed': {
        const n = await neededKeys(required(flags, 'bootstrap-server'), required(flags, 'topic'), positiveInt(flags, 'records', 1000));
        out(`records scanned: ${n.records} (plaintext ${n.plaintext}, referencing an earlier data key ${n.references}, malformed ${n.malformed}); data keys: ${n.dataKeys}`);
        for (const [id, count] of [...n.byKeyId].sort((a, b) => b[1] - a[1])) out(`${id}\t${count}`);
        return 0;
      }
      default:
        throw new UsageError(sub === undefined ? 'a subcommand is needed' : `unknown subcommand ${JSON.stringify(sub)}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`ledgerline keys: ${e.message}\n${KEYS_USAGE}`);
      return 2;
    }
    console.error(`ledgerline keys: ${(e as Error).message}`);
    return 1;
  }
}
