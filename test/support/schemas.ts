/// <reference types="vite/client" />
/**
 * The schema set the committed protocol/messages/ was generated from, loaded through the generator's own
 * parser, and the generated module of each message: what the protocol tests iterate over.
 */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { modulePath } from '../../protocol/gen/emit.js';
import { loadSchemas, type MessageSpec } from '../../protocol/gen/schema.js';
import type { Reader } from '../../protocol/wire/reader.js';
import type { Writer } from '../../protocol/wire/writer.js';

export const SCHEMA_ROOT = process.env.LEDGERLINE_SCHEMAS ?? join(fileURLToPath(new URL('../../..', import.meta.url)), 'shared', 'kafka-protocol');

export const specs: MessageSpec[] = loadSchemas(SCHEMA_ROOT);

export interface LoadedMessage {
  spec: MessageSpec;
  module: Record<string, unknown>;
  create: (init?: object) => Record<string, unknown>;
  encode: (w: Writer, m: unknown, version: number) => void;
  decode: (r: Reader, version: number) => Record<string, unknown>;
}

const generated = import.meta.glob('../../protocol/messages/**/*.gen.ts');

export async function loadMessage(spec: MessageSpec): Promise<LoadedMessage> {
  const key = `../../protocol/${modulePath(spec)}`;
  const load = generated[key];
  if (!load) throw new Error(`no generated module ${key} for ${spec.name}`);
  const module = (await load()) as Record<string, unknown>;
  const fn = <T>(prefix: string): T => {
    const f = module[`${prefix}${spec.name}`];
    if (typeof f !== 'function') throw new Error(`${key} does not export ${prefix}${spec.name}`);
    return f as T;
  };
  return { spec, module, create: fn('create'), encode: fn('encode'), decode: fn('decode') };
}

export function versionsOf(spec: MessageSpec): number[] {
  const out: number[] = [];
  for (let v = spec.validVersions.min; v <= spec.validVersions.max; v++) out.push(v);
  return out;
}
