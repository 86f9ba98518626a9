/**
 * The request schemas the generator walks: Kafka's JSON message schemas (the set protocol/messages/ was
 * generated from, `messages/*Request.json` only) parsed by the generator's own parser, each with its
 * generated module, whose `create…` functions give every struct its defaults.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { modulePath } from '../../../protocol/gen/emit.js';
import { parseMessage, type MessageSpec } from '../../../protocol/gen/schema.js';

export interface RequestSchema {
  spec: MessageSpec;
  module: Record<string, unknown>;
}

const SCHEMA_ROOT = process.env.LEDGERLINE_SCHEMAS ?? join(fileURLToPath(new URL('../../../..', import.meta.url)), 'shared', 'kafka-protocol');

/** The request schema and generated module of each API key asked for. */
export async function loadRequestSchemas(apiKeys: Iterable<number>): Promise<Map<number, RequestSchema>> {
  const wanted = new Set(apiKeys);
  const dir = join(SCHEMA_ROOT, 'messages');
  const out = new Map<number, RequestSchema>();
  for (const name of readdirSync(dir).sort()) {
    if (!name.endsWith('Request.json')) continue;
    const spec = parseMessage(`messages/${name}`, readFileSync(join(dir, name), 'utf8'));
    if (spec.type !== 'request' || spec.apiKey === undefined || !wanted.has(spec.apiKey)) continue;
    const module = (await import(/* @vite-ignore */ `../../../protocol/${modulePath(spec)}`)) as Record<string, unknown>;
    out.set(spec.apiKey, { spec, module });
  }
  for (const k of wanted) if (!out.has(k)) throw new Error(`no request schema for API key ${k} in ${dir}`);
  return out;
}
