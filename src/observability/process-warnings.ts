/**
 * Node process warnings (MaxListenersExceededWarning, DeprecationWarning, ExperimentalWarning, ...) as pino
 * log lines instead of free text on stderr.
 *
 * Node prints a warning through a listener of the process 'warning' event that it installs at startup
 * unless started with --no-warnings or NODE_NO_WARNINGS=1; those flags only skip installing it, the event is
 * still emitted (Node's process.md, "Event: 'warning'"). A command cannot choose its own node flags, so
 * `routeProcessWarnings` takes the listeners present before it (Node's printer) off the event and logs each
 * warning once, at warn, with its name, code and stack. Only the process's owner (src/cli.ts) calls it: the
 * Broker, usable as a library, leaves the process's global handlers alone.
 */
import type { Logger } from 'pino';

export function routeProcessWarnings(log: Logger): () => void {
  const previous = process.listeners('warning');
  for (const l of previous) process.off('warning', l);
  const onWarning = (warning: Error & { code?: string }): void => {
    log.warn({ warning: { name: warning.name, code: warning.code, message: warning.message, stack: warning.stack } }, `process warning: ${warning.name}: ${warning.message}`);
  };
  process.on('warning', onWarning);
  return () => {
    process.off('warning', onWarning);
    for (const l of previous) process.on('warning', l);
  };
}
