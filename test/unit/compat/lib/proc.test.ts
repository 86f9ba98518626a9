import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cpuSeconds } from '../../../../compat/lib/proc.js';

describe('cpuSeconds', () => {
  it('reads a live process’s user + system time from /proc and grows as it computes', () => {
    const before = cpuSeconds(process.pid);
    expect(before).not.toBeNull();
    // Busy for at least 50 ms of CPU (5 ticks), by the process's own clock.
    const start = process.cpuUsage();
    let x = 0;
    while (process.cpuUsage(start).user < 80_000) x += Math.sqrt(x + 1);
    expect(x).toBeGreaterThan(0);
    const after = cpuSeconds(process.pid)!;
    expect(after - before!).toBeGreaterThanOrEqual(0.03);
    expect(after - before!).toBeLessThan(10);
  });

  it('parses a command name with spaces and parentheses, and answers null for a gone process', async () => {
    // The kernel names a process after the file it executed: a link named with ') (' in it gives a command
    // name that a naive split of /proc/<pid>/stat gets wrong.
    const dir = mkdtempSync(join(tmpdir(), 'cpu-seconds-'));
    const odd = join(dir, 'a ) (b c');
    symlinkSync('/bin/sleep', odd);
    const child = spawn(odd, ['30'], { stdio: 'ignore' });
    await once(child, 'spawn');
    rmSync(dir, { recursive: true, force: true });
    expect(readFileSync(`/proc/${child.pid}/stat`, 'utf8')).toContain('(a ) (b c)');
    const deadline = Date.now() + 5000;
    let s: number | null = null;
    while (Date.now() < deadline && (s = cpuSeconds(child.pid)) === null) await new Promise((r) => setTimeout(r, 20));
    expect(s).not.toBeNull();
    expect(s).toBeGreaterThanOrEqual(0);
    expect(s).toBeLessThan(5);
    child.kill('SIGKILL');
    await once(child, 'exit');
    expect(cpuSeconds(child.pid)).toBeNull();
    expect(cpuSeconds(undefined)).toBeNull();
  });
});
