/**
 * `ledgerline replicated` (src/replication/replicated-command.ts) against a stand-in admin endpoint
 * (test/support/recording-admin.ts) that records each request and answers canned JSON in the shapes of
 * admin-routes.ts: the paths and bodies sent and the exit statuses.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { replicatedCommand } from '../../../src/replication/replicated-command.js';
import { closedAdminUrl, startRecordingAdmin, type AdminAnswer, type RecordingAdmin, type SeenRequest } from '../../support/recording-admin.js';

let server: RecordingAdmin;
let url: string;
let seen: SeenRequest[];
let handle: (req: SeenRequest) => AdminAnswer;

beforeAll(async () => {
  server = await startRecordingAdmin((r) => {
    seen.push(r);
    return handle(r);
  });
  url = server.url;
});

afterAll(async () => server?.close());

beforeEach(() => {
  seen = [];
  handle = () => ({ status: 500, json: { error: 'no answer set for this test' } });
});

/** Runs the command against the test's server: exit status, stdout and stderr. */
async function run(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await replicatedCommand([...args, '--admin', url], (l) => out.push(l), (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('ledgerline replicated', () => {
  it('puts a selection: one link per --link, in order, the pattern in the path (encoded)', async () => {
    handle = (r) => ({ status: 200, json: { pattern: decodeURIComponent(r.path.split('/').at(-1)!), ...(r.body as object), createdAtMs: 1 } });
    const r = await run('put', 'orders*', '--link', 'east', '--link=west', '--link', 'north');
    expect(r).toEqual({ code: 0, out: JSON.stringify({ pattern: 'orders*', links: ['east', 'west', 'north'], createdAtMs: 1 }, null, 2), err: '' });
    expect(await run('put', 'a/b', '--link', 'east')).toMatchObject({ code: 0, err: '' });
    expect(seen).toEqual([
      { method: 'PUT', path: '/v1/replicated-topics/orders*', body: { links: ['east', 'west', 'north'] } },
      { method: 'PUT', path: '/v1/replicated-topics/a%2Fb', body: { links: ['east'] } },
    ]);
  });

  it('lists the selections as the broker answers them', async () => {
    const selections = [{ pattern: 'orders*', links: ['east', 'west'], createdAtMs: 1 }];
    handle = () => ({ status: 200, json: selections });
    expect(await run('list')).toEqual({ code: 0, out: JSON.stringify(selections, null, 2), err: '' });
    expect(seen).toEqual([{ method: 'GET', path: '/v1/replicated-topics', body: undefined }]);
  });

  it('deletes a selection, printing nothing', async () => {
    handle = () => ({ status: 204 });
    expect(await run('delete', 'orders*')).toEqual({ code: 0, out: '', err: '' });
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(['DELETE /v1/replicated-topics/orders*']);
  });

  it("exits 1 with the broker's message for a 404 or a 400", async () => {
    handle = () => ({ status: 404, json: { error: 'no active-active selection orders*' } });
    expect(await run('delete', 'orders*')).toEqual({ code: 1, out: '', err: 'ledgerline replicated: no active-active selection orders*' });
    handle = () => ({ status: 404, json: { error: 'no cluster link nowhere' } });
    expect(await run('put', 'orders', '--link', 'nowhere')).toEqual({ code: 1, out: '', err: 'ledgerline replicated: no cluster link nowhere' });
    const bad = 'pattern must be a topic name or a prefix ending in *, not internal, got "or*ders"';
    handle = () => ({ status: 400, json: { error: bad } });
    expect(await run('put', 'or*ders', '--link', 'east')).toEqual({ code: 1, out: '', err: `ledgerline replicated: ${bad}` });
    handle = () => ({ status: 400, json: { error: 'links must not repeat' } });
    expect(await run('put', 'orders', '--link', 'east', '--link', 'east')).toEqual({ code: 1, out: '', err: 'ledgerline replicated: links must not repeat' });
    handle = () => ({ status: 400 });
    expect(await run('list')).toEqual({ code: 1, out: '', err: 'ledgerline replicated: GET /v1/replicated-topics: HTTP 400' });
  });

  it('exits 1 when the endpoint cannot be reached', async () => {
    const gone = await closedAdminUrl();
    const err: string[] = [];
    expect(await replicatedCommand(['list', '--admin', gone], () => undefined, (l) => err.push(l))).toBe(1);
    expect(err[0]).toMatch(/^ledgerline replicated: cannot reach the admin endpoint http:\/\/127\.0\.0\.1:\d+: /);
  });

  it('exits 2 for usage errors, before any request', async () => {
    const usage = async (...args: string[]): Promise<string> => {
      const r = await run(...args);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      expect(r.err).toMatch(/\nusage:\n  ledgerline replicated list/);
      return r.err.split('\n')[0]!;
    };
    expect(await usage()).toBe('ledgerline replicated: a subcommand is needed');
    expect(await usage('get', 'orders')).toBe('ledgerline replicated: unknown subcommand "get"');
    expect(await usage('put', '--link', 'east')).toBe('ledgerline replicated: put needs a topic or prefix*');
    expect(await usage('put', 'orders*')).toBe('ledgerline replicated: put needs --link LINK (one for each other cluster)');
    expect(await usage('put', 'orders*', 'payments', '--link', 'east')).toBe('ledgerline replicated: unexpected argument "payments"');
    expect(await usage('put', 'orders*', '--link')).toBe('ledgerline replicated: --link needs a value');
    expect(await usage('delete')).toBe('ledgerline replicated: delete needs a topic or prefix*');
    expect(await usage('delete', 'orders*', '--link', 'east')).toBe('ledgerline replicated: --link is not an option of replicated delete');
    expect(await usage('list', 'orders*')).toBe('ledgerline replicated: unexpected argument "orders*"');
    expect(await usage('list', '--link', 'east')).toBe('ledgerline replicated: --link is not an option of replicated list');
    expect(await usage('list', '--bogus', '1')).toBe('ledgerline replicated: unknown option --bogus');
    expect(await replicatedCommand(['list', '--admin', '127.0.0.1:9644'], () => undefined, () => undefined)).toBe(2);
    expect(seen).toEqual([]);
  });
});
