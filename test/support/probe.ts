/** Whether a test's external program can run: for the reason a test that needs it is skipped. */
import { spawnSync } from 'node:child_process';
import { lastLine } from '../../compat/lib/proc.js';

/** Null when `cmd args` runs and exits 0; else why not (not on PATH, or its last line of output), for a skip reason. */
export function probe(cmd: string, args: string[]): string | null {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) return (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? `${cmd} is not on PATH` : r.error.message;
  return r.status === 0 ? null : lastLine(r.stderr || r.stdout) || `exit ${r.status}`;
}
