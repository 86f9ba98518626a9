/**
 * Test setup: drops one known warning of the kafkajs test client, and only that one.
 *
 * kafkajs 2.2.4's request queue arms a timer with `throttledUntil - Date.now()` while `throttledUntil` is still its
 * initial -1 (RequestQueue.scheduleCheckPendingRequests), and Node.js 24 warns about every negative delay, which
 * it clamps to 1 ms: `TimeoutNegativeWarning: -1796552346674 is a negative number` once per test process that
 * uses kafkajs (tulios/kafkajs#1751, unfixed upstream). The timer behaves as before either way. A warning of that
 * type raised from anywhere else, and every other warning, is emitted as usual.
 */
const emitWarning = process.emitWarning;

function fromKafkajsRequestQueue(): boolean {
  return (new Error().stack ?? '').includes('kafkajs/src/network/requestQueue');
}

process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
  const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
  if (type === 'TimeoutNegativeWarning' && fromKafkajsRequestQueue()) return;
  (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
} as typeof process.emitWarning;
