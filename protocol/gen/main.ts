/**
 * `npm run gen:protocol [-- --schemas DIR] [--check]`
 *
 * Regenerates protocol/messages/ from Kafka's JSON message schemas. DIR defaults to ../shared/kafka-protocol
 * beside the repository; every *.json below it is read (messages/ and coordinator-records/ alike). Files
 * under protocol/messages/ that the schemas no longer produce are removed. `--check` writes nothing and
 * exits 1 when the committed files differ from what the schemas give.
 */
import { mkdirSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diffGenerated, generateFrom, listGenerated, PROTOCOL_DIR } from './generate.js';

const args = process.argv.slice(2);
let schemas = join(fileURLToPath(new URL('../..', import.meta.url)), '..', 'shared', 'kafka-protocol');
let check = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--schemas') schemas = args[++i] ?? '';
  else if (args[i] === '--check') check = true;
  else {
    console.error(`usage: gen:protocol [--schemas DIR] [--check]`);
    process.exit(2);
  }
}

const files = generateFrom(schemas);
const diff = diffGenerated(files);
if (check) {
  for (const d of diff) console.log(`${d.kind}: protocol/${d.path}`);
  process.exit(diff.length === 0 ? 0 : 1);
}
for (const f of files) {
  const p = join(PROTOCOL_DIR, f.path);
  let old: string | undefined;
  try {
    old = readFileSync(p, 'utf8');
  } catch {
    old = undefined;
  }
  if (old === f.content) continue;
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, f.content);
}
const wanted = new Set(files.map((f) => f.path));
for (const p of listGenerated()) if (!wanted.has(p)) rmSync(join(PROTOCOL_DIR, p));
console.log(`${files.length} modules from ${schemas}; ${diff.length} changed`);
