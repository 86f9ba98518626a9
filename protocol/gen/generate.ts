/** Generation as a library: used by the CLI (main.ts) and by the test that checks the committed output. */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate, type GeneratedFile } from './emit.js';
import { loadSchemas } from './schema.js';

export const PROTOCOL_DIR = fileURLToPath(new URL('..', import.meta.url));

export function generateFrom(schemaRoot: string): GeneratedFile[] {
  return generate(loadSchemas(schemaRoot));
}

/** Paths (relative to protocol/) of every generated file currently on disk. */
export function listGenerated(): string[] {
  const out: string[] = [];
  const root = join(PROTOCOL_DIR, 'messages');
  if (!existsSync(root)) return out;
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.gen.ts')) out.push(relative(PROTOCOL_DIR, p).split(sep).join('/'));
    }
  };
  walk(root);
  return out.sort();
}

export interface GeneratedDiff {
  kind: 'missing' | 'differs' | 'stale';
  path: string;
}

/** How the files on disk differ from `files`. */
export function diffGenerated(files: GeneratedFile[]): GeneratedDiff[] {
  const out: GeneratedDiff[] = [];
  const wanted = new Set<string>();
  for (const f of files) {
    wanted.add(f.path);
    const p = join(PROTOCOL_DIR, f.path);
    if (!existsSync(p)) out.push({ kind: 'missing', path: f.path });
    else if (readFileSync(p, 'utf8') !== f.content) out.push({ kind: 'differs', path: f.path });
  }
  for (const p of listGenerated()) if (!wanted.has(p)) out.push({ kind: 'stale', path: p });
  return out;
}
