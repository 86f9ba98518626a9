/**
 * A real broker process whose ledger store writes through a fault-injecting file system
 * (src/ledger/fault-fs.ts), for integration tests of how the broker answers storage failures. Started like
 * `ledgerline start` (`--set key=value`...); commands arrive one per line on stdin and are acknowledged with a
 * `"fault injected"` log line:
 *   failSyncs <n>   the next n fsyncs fail with EIO
 *   clear           every fault is lifted
 * BrokerProcess starts it with `{ entry: 'test/support/fault-broker.ts' }` and sends commands with `command()`.
 */
import { createInterface } from 'node:readline';
import { loadConfig } from '../../src/config.js';
import { FaultInjectingLedgerFs } from '../../src/ledger/fault-fs.js';
import { nodeLedgerFs } from '../../src/ledger/fs.js';
import { createLogger } from '../../src/observability/logger.js';
import { Broker } from '../../src/server/broker.js';

const args = process.argv.slice(2).filter((a) => a !== 'start');
const overrides: [string, string][] = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] !== '--set') throw new Error(`fault-broker: unknown argument ${args[i]}`);
  const kv = args[++i]!;
  overrides.push([kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]);
}
const log = createLogger();
const fs = new FaultInjectingLedgerFs(nodeLedgerFs);
const broker = new Broker(loadConfig({ env: process.env, overrides }), log, fs);
process.on('SIGTERM', () => void broker.stop().then(() => process.exit(0)));
await broker.start();
createInterface({ input: process.stdin }).on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  if (cmd === 'failSyncs') fs.failSyncs(Number(arg));
  else if (cmd === 'clear') fs.clear();
  else {
    log.error({ line }, 'fault-broker: unknown command');
    return;
  }
  log.info({ command: line.trim() }, 'fault injected');
});
