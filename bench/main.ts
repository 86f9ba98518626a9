/**
 * `npm run bench -- <name> [args...]`: runs bench/<name>.ts, whose default export takes the remaining args.
 * Benchmarks print figures; they are not tests.
 */
import { readdirSync } from 'node:fs';

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && f !== 'main.ts')
  .map((f) => f.slice(0, -3));

if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args...]`);
  process.exit(2);
}
const mod = (await import(`./${name}.ts`)) as { default: (args: string[]) => Promise<void> };
await mod.default(args);
