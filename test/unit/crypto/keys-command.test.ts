/** `ledgerline keys` (src/crypto/keys-command.ts): generate, rotate, list, and the usage errors. */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { keysCommand } from '../../../src/crypto/keys-command.js';

describe('ledgerline keys', () => {
  it('generates, rotates and lists keys of every type', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-cmd-'));
    const out: string[] = [];
    const say = (l: string): void => void out.push(l);
    expect(await keysCommand(['generate', 'orders', '--dir', dir], say)).toBe(0);
    expect(await keysCommand(['generate', 'legal', '--type', 'rsa', '--bits', '2048', '--dir', dir], say)).toBe(0);
    expect(await keysCommand(['generate', 'users', '--type=secret', `--dir=${dir}`], say)).toBe(0);
    expect(await keysCommand(['rotate', 'orders', '--dir', dir], say)).toBe(0);
    expect(out).toContain('orders.v1');
    out.length = 0;
    expect(await keysCommand(['list', '--dir', dir], say)).toBe(0);
    expect(out).toEqual(['legal\trsa\tlegal', 'orders\tx25519\torders orders.v1', 'users\tsecret\tusers']);
    expect(readdirSync(dir).sort()).toEqual(['legal.pem', 'legal.pub.pem', 'orders.pem', 'orders.pub.pem', 'orders.v1.pem', 'orders.v1.pub.pem', 'users.secret']);
  });

  it('answers a usage error with status 2 and a clear message, a failure with 1', async () => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await keysCommand(['generate', 'x'])).toBe(2);
      expect(err.mock.calls.at(-1)?.[0]).toContain('--dir is required');
      expect(await keysCommand(['generate', 'x', '--type', 'dsa', '--dir', '/tmp'])).toBe(2);
      expect(await keysCommand(['bogus'])).toBe(2);
      expect(await keysCommand(['generate', 'x', '--bits', '-1', '--dir', '/tmp'])).toBe(2);
      expect(await keysCommand(['rotate', 'none', '--dir', mkdtempSync(join(tmpdir(), 'keys-cmd-'))])).toBe(1);
      expect(err.mock.calls.at(-1)?.[0]).toContain('no key none');
    } finally {
      err.mockRestore();
    }
  });
});
