/// <reference types="vite/client" />
/**
 * What the protocol tests iterate over: every message of the committed generated code (read back from
 * protocol/messages/ itself, generated-model.ts) with its generated module, so the round trips run on a
 * bare clone. Kafka's schemas, which the committed code was generated from, live outside the repository
 * (`../shared/kafka-protocol`, or `LEDGERLINE_SCHEMAS`): `schemaSet` says whether they are here, and the
 * tests that need them (generate.test.ts) run only then, or fail when `LEDGERLINE_SCHEMAS` names a
 * folder that does not hold them (CI sets it, so the check cannot be skipped there unnoticed).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { modulePath } from '../../protocol/gen/emit.js';
import { loadSchemas, type MessageSpec } from '../../protocol/gen/schema.js';
import type { Reader } from '../../protocol/wire/reader.js';
import type { Writer } from '../../protocol/wire/writer.js';
import { loadGeneratedModel } from './generated-model.js';

/** Every message of protocol/messages/, as its generated code states it. */
export const specs: MessageSpec[] = loadGeneratedModel();

export const SCHEMA_ROOT = process.env.LEDGERLINE_SCHEMAS ?? join(fileURLToPath(new URL('../../..', import.meta.url)), 'shared', 'kafka-protocol');

/** True when the schemas were asked for by name (`LEDGERLINE_SCHEMAS`): then their absence is a failure. */
export const SCHEMAS_REQUIRED = process.env.LEDGERLINE_SCHEMAS !== undefined;

export type SchemaSet = { available: true; root: string; specs: MessageSpec[] } | { available: false; root: string; reason: string };

function findSchemaSet(): SchemaSet {
  const root = SCHEMA_ROOT;
  if (!existsSync(join(root, 'messages'))) {
    const why = SCHEMAS_REQUIRED ? `LEDGERLINE_SCHEMAS=${root} has no messages/ folder` : 'no ../shared beside the clone; LEDGERLINE_SCHEMAS=DIR names another folder';
    return { available: false, root, reason: `Kafka's message schemas are not at ${join(root, 'messages')} (${why})` };
  }
  return { available: true, root, specs: loadSchemas(root) };
}

export const schemaSet: SchemaSet = findSchemaSet();

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
