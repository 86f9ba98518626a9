/**
 * `npm run bench -- fuzz [seconds] [--seed N]`: the broker fuzz test (test/integration/fuzz.test.ts) with a
 * longer fuzz phase than CI's 90 s (default 300). Prints the seed, every distinct finding with its
 * reproducer, and where the JSON report went; exits 1 when the test fails.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default async function fuzz(args: string[]): Promise<void> {
  const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 300);
  const seedAt = args.indexOf('--seed');
  const seed = seedAt >= 0 ? args[seedAt + 1]! : String((Date.now() ^ (process.pid << 16)) >>> 0);
  const repo = fileURLToPath(new URL('..', import.meta.url));
  console.log(`broker fuzz: ${seconds} s, seed ${seed}`);
  const t0 = Date.now();
  const r = spawnSync('npx', ['vitest', 'run', 'test/integration/fuzz.test.ts'], {
    cwd: repo,
    stdio: 'inherit',
    env: { ...process.env, LEDGERLINE_FUZZ_SECONDS: String(seconds), LEDGERLINE_FUZZ_SEED: seed },
  });
  console.log(`${r.status === 0 ? 'passed' : 'FAILED'}: ${seconds} s of fuzzing, ${((Date.now() - t0) / 1000).toFixed(1)} s in all (seed ${seed})`);
  if (r.status !== 0) process.exitCode = 1;
}
