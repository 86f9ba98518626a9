import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { routeProcessWarnings } from '../../../src/observability/process-warnings.js';

function memoryLogger(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines: () => out.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('routeProcessWarnings', () => {
  it('logs a MaxListenersExceededWarning as a warn line and takes the stderr printer off the event', async () => {
    const { log, lines } = memoryLogger();
    const printer = (): void => undefined;
    process.on('warning', printer);
    const before = process.listeners('warning');
    const undo = routeProcessWarnings(log);
    try {
      // Whatever printed warnings before (Node's own listener, here also `printer`) no longer listens.
      for (const l of before) expect(process.listeners('warning')).not.toContain(l);
      expect(process.listenerCount('warning')).toBe(1);
      const e = new EventEmitter();
      e.setMaxListeners(1);
      e.on('x', () => undefined);
      e.on('x', () => undefined);
      await new Promise((r) => setImmediate(r));
      const logged = lines().filter((l) => String(l.msg).includes('MaxListenersExceededWarning'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatchObject({ level: 40, warning: { name: 'MaxListenersExceededWarning' } });
    } finally {
      undo();
      process.off('warning', printer);
    }
    // Undone: the listeners of before are back.
    for (const l of before) if (l !== printer) expect(process.listeners('warning')).toContain(l);
  });
});
