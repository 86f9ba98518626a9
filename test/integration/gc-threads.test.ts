/**
 * `ledgerline start` sizes V8's worker pool from the machine (src/server/gc-threads.ts): on up to 4 cores it
 * executes itself again with `--v8-pool-size=0`, as the same process, unless the operator chose a size (or
 * this Node.js has no process.execve).
 * Reads /proc (Linux).
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokerProcess } from '../support/broker-process.js';

const cmdline = (pid: number): string[] => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
const startedPid = (b: BrokerProcess): number | undefined => {
  const line = b.logs.find((l) => l.includes('"Ledgerline started"'));
  return line === undefined ? undefined : (JSON.parse(line) as { pid: number }).pid;
};

describe.skipIf(process.platform !== 'linux')("the broker's V8 worker pool", () => {
  let broker: BrokerProcess | undefined;
  afterEach(async () => {
    await broker?.stop();
    broker = undefined;
  });

  it('is sized from the machine on up to 4 cores, by the same process that was started', async () => {
    broker = await BrokerProcess.start({ nodeOptionsAsGiven: true });
    const args = cmdline(broker.pid!);
    // A Node.js without process.execve (before 22.15) keeps its pool; this one runs the broker too.
    const reexecutes = availableParallelism() <= 4 && typeof (process as { execve?: unknown }).execve === 'function';
    expect(args.includes('--v8-pool-size=0')).toBe(reexecutes);
    expect(startedPid(broker)).toBe(broker.pid);
    expect(args).toContain('start');
  });

  it('keeps the size the operator gave', async () => {
    broker = await BrokerProcess.start({ nodeOptions: ['--v8-pool-size=2'], nodeOptionsAsGiven: true });
    const args = cmdline(broker.pid!);
    expect(args.filter((a) => a.startsWith('--v8-pool-size'))).toEqual(['--v8-pool-size=2']);
    expect(startedPid(broker)).toBe(broker.pid);
  });
});
