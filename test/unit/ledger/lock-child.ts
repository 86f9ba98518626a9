/**
 * Child process of lock.test.ts: `node --import tsx lock-child.ts <dir>`. Opens the store and appends one
 * entry, prints `open <ledgerId>` once it is acknowledged, or `locked <code> <message>` if the directory is
 * in use, then waits to be killed (or exits after a refusal).
 */
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { LedgerError } from '../../../src/ledger/errors.js';

const [dir] = process.argv.slice(2);
try {
  const store = await LocalLedgerStore.open(dir!);
  const w = await store.create();
  await w.append(Buffer.from('held'));
  process.stdout.write(`open ${w.ledgerId}\n`);
  setInterval(() => undefined, 60_000);
} catch (err) {
  if (!(err instanceof LedgerError)) throw err;
  process.stdout.write(`locked ${err.code} ${err.message}\n`);
  process.exit(0);
}
