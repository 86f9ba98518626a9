/**
 * Runs a command-line program to its end, with a deadline, and reads its stdout as JSON lines: what the
 * e2e tools of every language print (src/crypto/README.md, "Libraries"; test/integration/e2e-*.test.ts).
 */
import { spawn } from 'node:child_process';

export interface ProgramRun {
  code: number | null;
  /** The stdout lines that are JSON objects, parsed, in order. */
  lines: any[];
  stdout: string;
  stderr: string;
}

export function runJsonLinesProgram(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<ProgramRun> {
  const timeoutMs = options.timeoutMs ?? 90_000;
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ').slice(0, 200)} did not end within ${timeoutMs} ms; stderr:\n${stderr.slice(-2000)}`));
    }, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l));
      resolve({ code, lines, stdout, stderr });
    });
  });
}
