/**
 * Child process of crash.test.ts: `node --import tsx crash-child.ts <dir> <seed>`. Opens the store, takes
 * over (fences) the ledgers a previous incarnation left open, deletes some sealed ones, then appends
 * concurrently to new ledgers until it is killed. Every outcome is printed only once the store has
 * acknowledged it; stdout to a pipe is synchronous on Linux, so a printed line was acknowledged before
 * the process could take another step:
 *   created <ledger> · sealed <ledger> <lastEntryId> · deleted <ledger> · ack <ledger> <entry>
 */
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { entryBytes } from './helpers.js';

const [dir, seedArg] = process.argv.slice(2);
let seed = Number(seedArg) >>> 0 || 1;
const random = (): number => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 0x1_0000_0000;
};
const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

const store = await LocalLedgerStore.open(dir!, { segmentBytes: 256 * 1024, maxEntryBytes: 16 * 1024 });
const existing = await store.list();
for (const m of existing) {
  if (m.state === 'open') {
    const sealed = await store.fence(m.ledgerId);
    out(`sealed ${m.ledgerId} ${sealed.lastAddConfirmed}`);
  }
}
const sealed = (await store.list()).filter((m) => m.state === 'sealed');
for (const m of sealed.slice(0, Math.max(0, sealed.length - 4))) {
  await store.delete(m.ledgerId);
  out(`deleted ${m.ledgerId}`);
}
const writers = await Promise.all([store.create(), store.create(), store.create()]);
for (const w of writers) out(`created ${w.ledgerId}`);
out('ready');
// Eight appenders over three ledgers, as produce requests for three partitions would arrive.
await Promise.all(
  Array.from({ length: 8 }, async () => {
    for (;;) {
      const w = writers[Math.floor(random() * writers.length)]!;
      const entryId = w.lastAddPushed + 1;
      const id = await w.append(entryBytes(w.ledgerId, entryId));
      out(`ack ${w.ledgerId} ${id}`);
      if (id !== entryId) throw new Error(`ledger ${w.ledgerId}: expected entry ${entryId}, got ${id}`);
    }
  }),
);
