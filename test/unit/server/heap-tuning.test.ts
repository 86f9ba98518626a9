/**
 * The broker's V8 setting, observed in real processes: buffers allocated and dropped at a broker's pace
 * (request frames of 256 KiB, a window of them alive) cost far fewer full collections once it is applied,
 * and a process started with its own choice keeps it.
 */
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EXTERNAL_MEMORY_FLAG, tuneHeapForBroker } from '../../../src/server/heap-tuning.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Runs a child that allocates 3 GiB in 256 KiB buffers, 64 alive at a time; returns its full collections. */
function majorCollections(tune: boolean, nodeFlags: string[] = []): { major: number; applied: string[] } {
  const script = `
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    import { tuneHeapForBroker } from ${JSON.stringify(join(REPO, 'src/server/heap-tuning.ts'))};
    const applied = ${tune} ? tuneHeapForBroker() : [];
    let major = 0;
    const obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
    });
    obs.observe({ entryTypes: ['gc'] });
    const window = [];
    for (let i = 0; i < 12 * 1024; i++) {
      const b = Buffer.allocUnsafe(256 * 1024);
      b[0] = i;
      window.push(b);
      if (window.length > 64) window.shift();
      if (i % 256 === 0) await new Promise((r) => setImmediate(r));
    }
    // GC entries reach the observer in a later turn: one more turn, then whatever is still buffered.
    await new Promise((r) => setImmediate(r));
    for (const e of obs.takeRecords()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
    console.log(JSON.stringify({ major, applied }));
  `;
  const out = execFileSync(process.execPath, [...nodeFlags, '--import', 'tsx', '--input-type=module', '-e', script], { cwd: REPO, encoding: 'utf8' });
  return JSON.parse(out.trim().split('\n').at(-1)!) as { major: number; applied: string[] };
}

describe('heap tuning for a broker', () => {
  it('cuts the full collections that external buffers cause', () => {
    const plain = majorCollections(false);
    const tuned = majorCollections(true);
    expect(tuned.applied).toEqual([EXTERNAL_MEMORY_FLAG]);
    // By default V8 starts one per 64 MiB allocated, or per more as the external limit grows: 21 here.
    expect(plain.major).toBeGreaterThanOrEqual(10);
    expect(tuned.major * 3).toBeLessThanOrEqual(plain.major);
  }, 60_000);

  it("leaves the operator's own choice alone", () => {
    expect(tuneHeapForBroker([`--no-${EXTERNAL_MEMORY_FLAG.slice(2)}`])).toEqual([]);
    expect(tuneHeapForBroker(['--external_memory_accounted_in_global_limit'])).toEqual([]);
    const kept = majorCollections(true, [`--no-${EXTERNAL_MEMORY_FLAG.slice(2)}`]);
    expect(kept.applied).toEqual([]);
    expect(kept.major).toBeGreaterThanOrEqual(10);
  }, 60_000);
});
