/**
 * Operations per second of `fn`: the best of `windows` windows of at least `windowMs` each, after `warmup`
 * calls. The best window rather than the mean, because the machine is shared: the figure approximates what
 * the code does when it has a core to itself. A promise returned by `fn` is awaited before the next call.
 */
export async function rate(fn: () => unknown, { windows = 5, windowMs = 120, warmup = 3 } = {}): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  let best = 0;
  for (let w = 0; w < windows; w++) {
    let ops = 0;
    const start = process.hrtime.bigint();
    let elapsed = 0;
    while (elapsed < windowMs * 1e6) {
      const r = fn();
      if (r instanceof Promise) await r;
      ops++;
      elapsed = Number(process.hrtime.bigint() - start);
    }
    best = Math.max(best, ops / (elapsed / 1e9));
  }
  return best;
}
