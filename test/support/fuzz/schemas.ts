/**
 * The request schemas the generator walks: every request message as the committed generated code states
 * it (test/support/generated-model.ts, which generate.test.ts checks against Kafka's own schemas where they
 * are available), so the fuzz test needs nothing beside the repository. Each comes with its generated
 * module, whose `create…` functions give every struct its defaults.
 */
import { modulePath } from '../../../protocol/gen/emit.js';
import type { MessageSpec } from '../../../protocol/gen/schema.js';
import { loadGeneratedModel } from '../generated-model.js';

export interface RequestSchema {
  spec: MessageSpec;
  module: Record<string, unknown>;
}

/** The request schema and generated module of each API key asked for. */
export async function loadRequestSchemas(apiKeys: Iterable<number>): Promise<Map<number, RequestSchema>> {
  const wanted = new Set(apiKeys);
  const out = new Map<number, RequestSchema>();
  for (const spec of loadGeneratedModel()) {
    if (spec.type !== 'request' || spec.apiKey === undefined || !wanted.has(spec.apiKey)) continue;
    const module = (await import(/* @vite-ignore */ `../../../protocol/${modulePath(spec)}`)) as Record<string, unknown>;
    out.set(spec.apiKey, { spec, module });
  }
  for (const k of wanted) if (!out.has(k)) throw new Error(`no generated request message for API key ${k}`);
  return out;
}
