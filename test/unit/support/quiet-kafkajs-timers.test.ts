/**
 * The test setup that drops kafkajs's negative-timer warning (test/support/quiet-kafkajs-timers.ts, loaded for
 * every test file by vitest.config.ts) drops it for kafkajs's request queue only. Node.js warns about a negative
 * delay once per process, so each case runs in a process of its own.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const SETUP = path.resolve(import.meta.dirname, '../../support/quiet-kafkajs-timers.ts');
const run = promisify(execFile);

/** stderr of a Node.js process that runs `code`, with the setup loaded unless `setup` is false. */
async function stderrOf(code: string, setup = true): Promise<string> {
  const { stderr } = await run(process.execPath, [...(setup ? ['--import', 'tsx', '--import', SETUP] : []), '-e', code], { timeout: 20_000 });
  return stderr;
}

// A function whose frames name kafkajs's request queue, as its scheduleCheckPendingRequests does.
const FROM_QUEUE = `new Function('st', 'clearTimeout(st(() => {}, -1796552346674));\\n//# sourceURL=/x/node_modules/kafkajs/src/network/requestQueue/index.js')(setTimeout)`;

describe.runIf(Number(process.versions.node.split('.')[0]) >= 24)('quiet kafkajs timers (Node.js 24 warns about negative delays)', () => {
  it("drops the TimeoutNegativeWarning of kafkajs's request queue", async () => {
    expect(await stderrOf(FROM_QUEUE, false)).toContain('TimeoutNegativeWarning: -1796552346674 is a negative number');
    expect(await stderrOf(FROM_QUEUE)).not.toContain('TimeoutNegativeWarning');
  });

  it('keeps one raised anywhere else, and every other warning', async () => {
    expect(await stderrOf('clearTimeout(setTimeout(() => {}, -5))')).toContain('TimeoutNegativeWarning: -5 is a negative number');
    expect(await stderrOf("process.emitWarning('something else', 'ExperimentalWarning')")).toContain('ExperimentalWarning: something else');
  });
});
