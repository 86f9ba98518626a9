/**
 * The shared side of the admin-endpoint commands (src/observability/admin-command.ts): option parsing, the
 * --admin URL, and the exit statuses. The commands' own tests (tenants, replication) drive it end to end.
 */
import { describe, expect, it } from 'vitest';
import { adminUrl, needName, onlyOptions, parse, RequestError, run, UsageError } from '../../../src/observability/admin-command.js';

describe('admin commands', () => {
  it('parses options anywhere, as --name value or --name=value, lists and flags', () => {
    const p = parse(['put', '--admin=http://h:1', 'east', '--tag', 'a', '--tag', 'b', '--wait', '--link', 'x'], { values: ['admin', 'link'], lists: ['tag'], flags: ['wait'] });
    expect(p.positional).toEqual(['put', 'east']);
    expect([...p.values]).toEqual([['admin', 'http://h:1'], ['link', 'x']]);
    expect(p.lists.get('tag')).toEqual(['a', 'b']);
    expect(p.flags.has('wait')).toBe(true);
    expect(p.given).toEqual(['admin', 'tag', 'wait', 'link']);
    expect(() => parse(['--link'], { values: ['link'] })).toThrow(new UsageError('--link needs a value'));
    expect(() => parse(['--link', '--wait'], { values: ['link'], flags: ['wait'] })).toThrow(new UsageError('--link needs a value'));
    expect(() => parse(['--link', 'a', '--link', 'b'], { values: ['link'] })).toThrow(new UsageError('--link is given twice'));
    expect(() => parse(['--wait=yes'], { values: [], flags: ['wait'] })).toThrow(new UsageError('--wait takes no value'));
    expect(() => parse(['--nope'], { values: [] })).toThrow(new UsageError('unknown option --nope'));
    expect(() => onlyOptions(parse(['--link', 'a'], { values: ['link'] }), [], 'list')).toThrow(new UsageError('--link is not an option of list'));
    expect(() => needName(['a', 'b'], 'get', 'a name')).toThrow(new UsageError('unexpected argument "b"'));
    expect(() => needName([], 'get', 'a name')).toThrow(new UsageError('get needs a name'));
  });

  it('takes an http(s) URL for --admin, without its trailing slash', () => {
    expect(adminUrl('http://127.0.0.1:9644/')).toBe('http://127.0.0.1:9644');
    expect(() => adminUrl('localhost:9644')).toThrow(UsageError);
    expect(() => adminUrl('ftp://h/')).toThrow(new UsageError('--admin must be an http:// URL, got "ftp://h/"'));
  });

  it('exits 2 with the usage for a usage error, 1 for the others', async () => {
    const err: string[] = [];
    expect(await run('x', 'usage: ...', (l) => err.push(l), async () => 0)).toBe(0);
    expect(await run('x', 'usage: ...', (l) => err.push(l), async () => Promise.reject(new UsageError('bad')))).toBe(2);
    expect(await run('x', 'usage: ...', (l) => err.push(l), async () => Promise.reject(new RequestError('refused')))).toBe(1);
    expect(err).toEqual(['ledgerline x: bad\nusage: ...', 'ledgerline x: refused']);
  });
});
