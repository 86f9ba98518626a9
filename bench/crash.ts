/**
 * `npm run bench -- crash [kills] [--seed N]`: the ledger store's SIGKILL crash test with more kills than
 * CI runs (default 500; CI runs 50). Each kill lands at a random moment of a child process appending,
 * sealing, deleting and rolling; after each one the store must reopen with every acknowledged entry,
 * seal and delete. Prints the verdict and the time taken.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export default async function crash(args: string[]): Promise<void> {
  const kills = Number(args.find((a) => /^\d+$/.test(a)) ?? 500);
  const seedAt = args.indexOf('--seed');
  const seed = seedAt >= 0 ? args[seedAt + 1] : String(Date.now() % 1_000_000_007);
  const repo = fileURLToPath(new URL('..', import.meta.url));
  console.log(`ledger crash test: ${kills} SIGKILLs, seed ${seed}`);
  const t0 = Date.now();
  const r = spawnSync('npx', ['vitest', 'run', 'test/unit/ledger/crash.test.ts'], {
    cwd: repo,
    stdio: 'inherit',
    env: { ...process.env, LEDGERLINE_CRASH_KILLS: String(kills), LEDGERLINE_CRASH_SEED: seed },
  });
  console.log(`${r.status === 0 ? 'passed' : 'FAILED'}: ${kills} kills in ${((Date.now() - t0) / 1000).toFixed(1)} s (seed ${seed})`);
  if (r.status !== 0) process.exitCode = 1;
}
