/**
 * `npm run bench -- fuzz [seconds] [--seed N]`: the broker fuzz test (test/integration/fuzz.test.ts) with a
 * longer fuzz phase than CI's 90 s (default 300). Prints the seed, every distinct finding with its
 * reproducer, and where the JSON report went; exits 1 when the test fails.
 *
 * The broker's state grows with the topics and groups the fuzzer creates: about 0.25 MiB of live heap per second
 * of fuzzing on a 2-core machine. A longer run raises the test's old generation cap and RSS bound (set for CI's
 * 90 s) by 0.5 MiB per second beyond 90, unless LEDGERLINE_FUZZ_OLD_SPACE_MIB or LEDGERLINE_FUZZ_RSS_MIB is given.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default async function fuzz(args: string[]): Promise<void> {
  const seconds = Number(args.find((a) => /^\d+$/.test(a)) ?? 300);
  const seedAt = args.indexOf('--seed');
  const seed = seedAt >= 0 ? args[seedAt + 1]! : String((Date.now() ^ (process.pid << 16)) >>> 0);
  const repo = fileURLToPath(new URL('..', import.meta.url));
  console.log(`broker fuzz: ${seconds} s, seed ${seed}`);
  const extraMiB = Math.ceil(Math.max(0, seconds - 90) / 2);
  const bounds = {
    LEDGERLINE_FUZZ_OLD_SPACE_MIB: process.env.LEDGERLINE_FUZZ_OLD_SPACE_MIB ?? String(192 + extraMiB),
    LEDGERLINE_FUZZ_RSS_MIB: process.env.LEDGERLINE_FUZZ_RSS_MIB ?? String(640 + extraMiB),
  };
  console.log(`old generation cap ${bounds.LEDGERLINE_FUZZ_OLD_SPACE_MIB} MiB, RSS bound ${bounds.LEDGERLINE_FUZZ_RSS_MIB} MiB`);
  const t0 = Date.now();
  const r = spawnSync('npx', ['vitest', 'run', 'test/integration/fuzz.test.ts'], {
    cwd: repo,
    stdio: 'inherit',
    env: { ...process.env, ...bounds, LEDGERLINE_FUZZ_SECONDS: String(seconds), LEDGERLINE_FUZZ_SEED: seed },
  });
  console.log(`${r.status === 0 ? 'passed' : 'FAILED'}: ${seconds} s of fuzzing, ${((Date.now() - t0) / 1000).toFixed(1)} s in all (seed ${seed})`);
  if (r.status !== 0) process.exitCode = 1;
}
