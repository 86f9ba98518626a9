/**
 * Structured logs: pino JSON lines on stdout, or pino-pretty's coloured lines when stdout is a terminal.
 * `LEDGERLINE_LOG_LEVEL` (default info) sets the level; `LEDGERLINE_LOG_FORMAT=json|pretty` overrides the
 * terminal detection.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(options: { level?: string; pretty?: boolean; name?: string } = {}): Logger {
  const level = options.level ?? process.env.LEDGERLINE_LOG_LEVEL ?? 'info';
  const format = process.env.LEDGERLINE_LOG_FORMAT;
  const pretty = options.pretty ?? (format ? format === 'pretty' : process.stdout.isTTY === true);
  return pino({
    name: options.name ?? 'ledgerline',
    level,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' } } } : {}),
  });
}
