/**
 * `ledgerline links`, `ledgerline mirrors` and `ledgerline migrate` (src/replication/command.ts) against a stand-in
 * admin endpoint (test/support/recording-admin.ts) that records each request and answers canned JSON in the shapes
 * of admin-routes.ts: the bodies sent, the waits (promote --wait, migrate --cutover, migrate --until-caught-up) and
 * the exit statuses.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { linksCommand, migrateCommand, mirrorsCommand } from '../../../src/replication/command.js';
import type { MirrorState } from '../../../src/replication/model.js';
import { closedAdminUrl, startRecordingAdmin, type AdminAnswer, type RecordingAdmin, type SeenRequest } from '../../support/recording-admin.js';

let server: RecordingAdmin;
let url: string;
let dir: string;
let seen: SeenRequest[];
let handle: (req: SeenRequest) => AdminAnswer;

beforeAll(async () => {
  server = await startRecordingAdmin((r) => {
    seen.push(r);
    return handle(r);
  });
  url = server.url;
  dir = await mkdtemp(join(tmpdir(), 'ledgerline-replication-command-'));
});

afterAll(async () => {
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  seen = [];
  handle = () => ({ status: 500, json: { error: 'no answer set for this test' } });
});

type Command = (args: string[], out: (l: string) => void, err: (l: string) => void) => Promise<number>;

/** Runs a command against the test's server: exit status, stdout and stderr. */
async function run(command: Command, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await command([...args, '--admin', url], (l) => out.push(l), (l) => err.push(l));
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A mirror as GET /v1/mirrors answers it, with one partition per lag given. */
function mirror(topic: string, state: MirrorState, lags: number[] = [], link = 'east'): Record<string, unknown> {
  const partitions = lags.map((lag, partition) => ({ topic, partition, link, sourceTopic: topic, position: 0, sourceHighWatermark: lag, lag }));
  return { topic, link, sourceTopic: topic, state, stoppedPartitions: [], groupsSyncedBy: [], createdAtMs: 1, stateChangedAtMs: 1, partitions };
}

const posts = (): string[] => seen.filter((r) => r.method === 'POST').map((r) => r.path);

describe('ledgerline links', () => {
  it('puts a link from options: every flag to its field, the CA and password read from files', async () => {
    const ca = join(dir, 'ca.pem');
    const pw = join(dir, 'pw.txt');
    await writeFile(ca, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    await writeFile(pw, 's3cret\n');
    handle = (r) => ({ status: 200, json: { name: 'east', ...(r.body as object), sasl: { mechanism: 'SCRAM-SHA-512', username: 'mirror', password: null } } });
    const r = await run(
      linksCommand,
      'put', 'east',
      '--bootstrap', '10.0.0.1:9092,10.0.0.2:9092',
      '--security-protocol', 'SASL_SSL',
      '--sasl-mechanism', 'SCRAM-SHA-512', '--username', 'mirror', '--password-file', pw,
      '--ca-file', ca,
      '--group-filter', 'billing-*', '--group-filter=audit',
      '--no-group-offsets',
      '--auto-mirror', 'orders*', '--auto-mirror', 'payments',
      '--offset-sync-interval-ms', '1000', '--metadata-sync-interval-ms=60000',
    );
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(seen).toEqual([
      {
        method: 'PUT',
        path: '/v1/links/east',
        body: {
          bootstrapServers: '10.0.0.1:9092,10.0.0.2:9092',
          securityProtocol: 'SASL_SSL',
          sasl: { mechanism: 'SCRAM-SHA-512', username: 'mirror', password: 's3cret' },
          tls: { ca: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n' },
          groupFilters: ['billing-*', 'audit'],
          syncGroupOffsets: false,
          autoMirrorTopics: ['orders*', 'payments'],
          offsetSyncIntervalMs: 1000,
          metadataSyncIntervalMs: 60000,
        },
      },
    ]);
    expect(JSON.parse(r.out)).toMatchObject({ name: 'east', sasl: { password: null } });
  });

  it('sends only the settings given, leaving the defaults to the broker', async () => {
    handle = (r) => ({ status: 200, json: r.body });
    expect((await run(linksCommand, 'put', 'west', '--bootstrap', 'kafka:9092')).code).toBe(0);
    expect((await run(linksCommand, 'put', 'west', '--bootstrap', 'kafka:9092', '--security-protocol', 'SASL_PLAINTEXT', '--sasl-mechanism', 'SCRAM-SHA-256', '--username', 'u', '--password', 'p')).code).toBe(0);
    expect(seen.map((r) => r.body)).toEqual([
      { bootstrapServers: 'kafka:9092' },
      { bootstrapServers: 'kafka:9092', securityProtocol: 'SASL_PLAINTEXT', sasl: { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' } },
    ]);
  });

  it('puts a link from a file as it is', async () => {
    const file = join(dir, 'link.json');
    const link = { bootstrapServers: 'kafka:9092', autoMirrorTopics: ['orders*'] };
    await writeFile(file, JSON.stringify(link));
    handle = (r) => ({ status: 200, json: r.body });
    expect(await run(linksCommand, 'put', 'north', '--file', file)).toEqual({ code: 0, out: JSON.stringify(link, null, 2), err: '' });
    expect(seen).toEqual([{ method: 'PUT', path: '/v1/links/north', body: link }]);
  });

  it('lists, gets and deletes links at their paths, names encoded', async () => {
    handle = (r) => (r.method === 'DELETE' ? { status: 204 } : { status: 200, json: r.path === '/v1/links' ? [{ name: 'a b' }] : { link: { name: 'a b' } } });
    expect(await run(linksCommand, 'list')).toEqual({ code: 0, out: JSON.stringify([{ name: 'a b' }], null, 2), err: '' });
    expect((await run(linksCommand, 'get', 'a b')).code).toBe(0);
    expect(await run(linksCommand, 'delete', 'a b')).toEqual({ code: 0, out: '', err: '' });
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/links', 'GET /v1/links/a%20b', 'DELETE /v1/links/a%20b']);
  });

  it("exits 1 with the broker's message when it refuses (409) or finds nothing (404)", async () => {
    const inUse = 'cluster link east is used by mirror topics orders: promote, fail over or delete them first';
    handle = (r) => (r.path === '/v1/links/east' ? { status: 409, json: { error: inUse } } : { status: 404, json: { error: 'cluster link gone does not exist' } });
    expect(await run(linksCommand, 'delete', 'east')).toEqual({ code: 1, out: '', err: `ledgerline links: ${inUse}` });
    expect(await run(linksCommand, 'get', 'gone')).toEqual({ code: 1, out: '', err: 'ledgerline links: cluster link gone does not exist' });
    handle = () => ({ status: 400, json: { error: 'bootstrapServers: "kafka" is not host:port' } });
    expect(await run(linksCommand, 'put', 'east', '--bootstrap', 'kafka')).toEqual({ code: 1, out: '', err: 'ledgerline links: bootstrapServers: "kafka" is not host:port' });
  });

  it('exits 1 when the endpoint cannot be reached', async () => {
    const gone = await closedAdminUrl();
    const err: string[] = [];
    expect(await linksCommand(['list', '--admin', gone], () => undefined, (l) => err.push(l))).toBe(1);
    expect(err[0]).toMatch(/^ledgerline links: cannot reach the admin endpoint http:\/\/127\.0\.0\.1:\d+: /);
  });

  it('exits 2 for usage errors, before any request', async () => {
    const usage = async (...args: string[]): Promise<string> => {
      const r = await run(linksCommand, ...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/\nusage:\n  ledgerline links list/);
      return r.err.split('\n')[0]!;
    };
    expect(await usage()).toBe('ledgerline links: a subcommand is needed');
    expect(await usage('create', 'x')).toBe('ledgerline links: unknown subcommand "create"');
    expect(await usage('get')).toBe('ledgerline links: get needs a link name');
    expect(await usage('get', 'a', 'b')).toBe('ledgerline links: unexpected argument "b"');
    expect(await usage('list', '--bootstrap', 'k:9092')).toBe('ledgerline links: --bootstrap is not an option of links list');
    expect(await usage('put', 'x')).toBe('ledgerline links: put needs --bootstrap HOST:PORT[,HOST:PORT...] or --file');
    expect(await usage('put', 'x', '--file', 'x.json', '--bootstrap', 'k:9092')).toBe('ledgerline links: --file describes the whole link: no --bootstrap with it');
    expect(await usage('put', 'x', '--file', join(dir, 'missing.json'))).toMatch(/cannot read --file .*missing\.json/);
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--security-protocol', 'TLS')).toBe('ledgerline links: --security-protocol must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL, got "TLS"');
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--username', 'u', '--password', 'p')).toBe('ledgerline links: SASL needs --sasl-mechanism, --username and one of --password or --password-file');
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--sasl-mechanism', 'SCRAM-SHA-256', '--username', 'u', '--password', 'p', '--password-file', 'f')).toMatch(/one of --password or --password-file/);
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--sasl-mechanism', 'PLAIN', '--username', 'u', '--password', 'p')).toMatch(/--sasl-mechanism must be one of SCRAM-SHA-256, SCRAM-SHA-512/);
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--ca-file', join(dir, 'missing.pem'))).toMatch(/cannot read --ca-file/);
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--offset-sync-interval-ms', 'soon')).toBe('ledgerline links: --offset-sync-interval-ms must be a whole number of at least 0, got "soon"');
    expect(await usage('put', 'x', '--bootstrap', 'k:9092', '--bootstrap', 'j:9092')).toBe('ledgerline links: --bootstrap is given twice');
    expect(await usage('put', 'x', '--no-group-offsets=yes', '--bootstrap', 'k:9092')).toBe('ledgerline links: --no-group-offsets takes no value');
    expect(await usage('list', '--bogus', '1')).toBe('ledgerline links: unknown option --bogus');
    expect(await usage('put', 'x', '--bootstrap')).toBe('ledgerline links: --bootstrap needs a value');
    expect(await linksCommand(['list', '--admin', '127.0.0.1:9644'], () => undefined, () => undefined)).toBe(2);
    expect(seen).toEqual([]);
  });
});

describe('ledgerline mirrors', () => {
  it('creates a mirror: topic, link and the source topic when given', async () => {
    handle = (r) => ({ status: 201, json: { ...(r.body as object), state: 'mirroring' } });
    expect((await run(mirrorsCommand, 'create', 'orders', '--link', 'east')).code).toBe(0);
    const r = await run(mirrorsCommand, 'create', 'orders-eu', '--link', 'east', '--source-topic', 'orders');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ topic: 'orders-eu', link: 'east', sourceTopic: 'orders', state: 'mirroring' });
    expect(seen).toEqual([
      { method: 'POST', path: '/v1/mirrors', body: { topic: 'orders', link: 'east' } },
      { method: 'POST', path: '/v1/mirrors', body: { topic: 'orders-eu', link: 'east', sourceTopic: 'orders' } },
    ]);
  });

  it('promotes and fails over without waiting: one POST, its answer printed', async () => {
    handle = (r) => ({ status: 200, json: mirror('orders', r.path.endsWith('/promote') ? 'promoting' : 'failing-over') });
    const promote = await run(mirrorsCommand, 'promote', 'orders');
    expect(promote.code).toBe(0);
    expect(JSON.parse(promote.out)).toMatchObject({ topic: 'orders', state: 'promoting' });
    expect(JSON.parse((await run(mirrorsCommand, 'failover', 'orders')).out)).toMatchObject({ state: 'failing-over' });
    expect(seen.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/mirrors/orders/promote', 'POST /v1/mirrors/orders/failover']);
  });

  it('promote --wait polls the mirror until it is promoted and prints the final record', async () => {
    let gets = 0;
    handle = (r) => ({ status: 200, json: mirror('orders', r.method === 'POST' || ++gets < 3 ? 'promoting' : 'promoted') });
    const started = Date.now();
    const r = await run(mirrorsCommand, 'promote', 'orders', '--wait');
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(r.out)).toMatchObject({ topic: 'orders', state: 'promoted' });
    expect(seen.map((x) => `${x.method} ${x.path}`)).toEqual(['POST /v1/mirrors/orders/promote', 'GET /v1/mirrors/orders', 'GET /v1/mirrors/orders', 'GET /v1/mirrors/orders']);
    // Three polls, 500 ms apart.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  });

  it('promote --wait exits 1 at its timeout, naming the state reached', async () => {
    handle = () => ({ status: 200, json: mirror('orders', 'promoting') });
    const started = Date.now();
    const r = await run(mirrorsCommand, 'promote', 'orders', '--wait', '--timeout-ms', '1200');
    const took = Date.now() - started;
    expect(r).toEqual({ code: 1, out: '', err: 'ledgerline mirrors: mirror orders did not become promoted within 1200 ms: it is promoting' });
    expect(took).toBeGreaterThanOrEqual(1200);
    expect(took).toBeLessThan(3000);
    expect(seen.filter((x) => x.method === 'GET').length).toBeGreaterThanOrEqual(2);
  });

  it('a poll still unanswered at the timeout ends the wait without blaming the endpoint', async () => {
    handle = (r) => (r.method === 'POST' ? { status: 200, json: mirror('orders', 'promoting') } : 'hang');
    const started = Date.now();
    const r = await run(mirrorsCommand, 'promote', 'orders', '--wait', '--timeout-ms', '1200');
    expect(r).toEqual({ code: 1, out: '', err: 'ledgerline mirrors: mirror orders did not become promoted within 1200 ms: it is promoting' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('a wait ends at once when the mirror can no longer get there, and survives a poll that cannot connect', async () => {
    handle = (r) => ({ status: 200, json: mirror('orders', r.method === 'POST' ? 'promoting' : 'failing-over') });
    expect(await run(mirrorsCommand, 'promote', 'orders', '--wait')).toEqual({ code: 1, out: '', err: 'ledgerline mirrors: mirror orders is failing-over: it cannot become promoted' });
    seen = [];
    let gets = 0;
    handle = (r) => (r.method === 'POST' ? { status: 200, json: mirror('orders', 'failing-over') } : ++gets === 1 ? 'destroy' : { status: 200, json: mirror('orders', 'failed-over') });
    const r = await run(mirrorsCommand, 'failover', 'orders', '--wait', '--timeout-ms', '5000');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ state: 'failed-over' });
    expect(seen.length).toBe(3);
  });

  it('exits 1 with the broker\'s message for a 404 or 409', async () => {
    handle = (r) =>
      r.method === 'GET'
        ? { status: 404, json: { error: 'topic nope is not a mirror topic' } }
        : { status: 409, json: { error: 'a promoted mirror cannot fail over' } };
    expect(await run(mirrorsCommand, 'get', 'nope')).toEqual({ code: 1, out: '', err: 'ledgerline mirrors: topic nope is not a mirror topic' });
    expect(await run(mirrorsCommand, 'failover', 'orders', '--wait')).toEqual({ code: 1, out: '', err: 'ledgerline mirrors: a promoted mirror cannot fail over' });
  });

  it('exits 2 for usage errors, before any request', async () => {
    const usage = async (...args: string[]): Promise<string> => {
      const r = await run(mirrorsCommand, ...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/\nusage:\n  ledgerline mirrors list/);
      return r.err.split('\n')[0]!;
    };
    expect(await usage()).toBe('ledgerline mirrors: a subcommand is needed');
    expect(await usage('delete', 'orders')).toBe('ledgerline mirrors: unknown subcommand "delete"');
    expect(await usage('create', 'orders')).toBe('ledgerline mirrors: create needs --link');
    expect(await usage('create', '--link', 'east')).toBe('ledgerline mirrors: create needs a topic name');
    expect(await usage('promote')).toBe('ledgerline mirrors: promote needs a topic name');
    expect(await usage('promote', 'orders', '--timeout-ms', '100')).toBe('ledgerline mirrors: --timeout-ms is for --wait');
    expect(await usage('promote', 'orders', '--wait', '--timeout-ms', '0')).toBe('ledgerline mirrors: --timeout-ms must be a whole number of at least 1, got "0"');
    expect(await usage('get', 'orders', '--link', 'east')).toBe('ledgerline mirrors: --link is not an option of mirrors get');
    expect(await usage('list', '--wait')).toBe('ledgerline mirrors: --wait is not an option of mirrors list');
    expect(seen).toEqual([]);
  });
});

describe('ledgerline migrate', () => {
  it('stores the link and follows its mirrors until every one exists and has caught up, through a dropped poll', async () => {
    const answers = [
      [mirror('orders', 'mirroring', [5, 0])],
      [mirror('orders', 'mirroring', [0, 0]), mirror('payments', 'mirroring', [-1]), mirror('other', 'mirroring', [9], 'west')],
      [mirror('orders', 'mirroring', [0, 0]), mirror('payments', 'mirroring', [0]), mirror('other', 'mirroring', [9], 'west')],
    ];
    let gets = 0;
    let polls = 0;
    // The second poll finds the connection dropped: the follower says so and polls again at the next interval.
    handle = (r) => (r.method === 'PUT' ? { status: 200, json: r.body } : ++polls === 2 ? 'destroy' : { status: 200, json: answers[Math.min(gets++, answers.length - 1)] });
    const pw = join(dir, 'migrate-pw.txt');
    await writeFile(pw, 'pw\n');
    const r = await run(
      migrateCommand,
      '--link', 'east', '--bootstrap', 'kafka-1:9092', '--topics', 'orders*, payments',
      '--security-protocol', 'SASL_PLAINTEXT', '--sasl-mechanism', 'SCRAM-SHA-256', '--username', 'm', '--password-file', pw,
      '--interval-ms', '100', '--until-caught-up',
    );
    expect(r.code).toBe(0);
    expect(seen[0]).toEqual({
      method: 'PUT',
      path: '/v1/links/east',
      body: {
        bootstrapServers: 'kafka-1:9092',
        securityProtocol: 'SASL_PLAINTEXT',
        sasl: { mechanism: 'SCRAM-SHA-256', username: 'm', password: 'pw' },
        autoMirrorTopics: ['orders*', 'payments'],
        groupFilters: ['*'],
      },
    });
    const lines = r.out.split('\n').map((l) => JSON.parse(l) as { link: string; atMs: number; mirrors: unknown[] });
    expect(lines.map((l) => l.mirrors)).toEqual([
      [{ topic: 'orders', state: 'mirroring', lag: 5 }],
      [{ topic: 'orders', state: 'mirroring', lag: 0 }, { topic: 'payments', state: 'mirroring', lag: null }],
      [{ topic: 'orders', state: 'mirroring', lag: 0 }, { topic: 'payments', state: 'mirroring', lag: 0 }],
    ]);
    expect(lines.every((l) => l.link === 'east' && typeof l.atMs === 'number')).toBe(true);
    expect(r.err).toMatch(/^ledgerline migrate: link east stored, mirroring orders\*, payments/);
    expect(r.err).toMatch(/\nledgerline migrate: cannot reach the admin endpoint .*; trying again in 100 ms$/);
  });

  it('follows until interrupted: SIGINT ends it with status 0 and its handler is removed', async () => {
    handle = (r) => (r.method === 'PUT' ? { status: 200, json: r.body } : { status: 200, json: [mirror('orders', 'mirroring', [3])] });
    const before = process.listeners('SIGINT');
    const out: string[] = [];
    const running = migrateCommand(['--link', 'east', '--bootstrap', 'k:9092', '--topics', 'orders', '--groups', 'billing-*,audit', '--interval-ms', '100', '--admin', url], (l) => out.push(l), () => undefined);
    const deadline = Date.now() + 5_000;
    while (out.length < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const added = process.listeners('SIGINT').filter((l) => !before.includes(l));
    expect(added.length).toBe(1);
    (added[0] as () => void)();
    expect(await running).toBe(0);
    expect(process.listeners('SIGINT')).toEqual(before);
    expect(out.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(out[0]!).mirrors).toEqual([{ topic: 'orders', state: 'mirroring', lag: 3 }]);
    expect((seen[0]!.body as { groupFilters: string[] }).groupFilters).toEqual(['billing-*', 'audit']);
  });

  it('--cutover promotes only the mirrors still mirroring and waits until all are promoted', async () => {
    const states = new Map<string, MirrorState>([
      ['audit', 'promoted'],
      ['old', 'failed-over'],
      ['orders', 'mirroring'],
      ['payments', 'promoting'],
    ]);
    const seenPromoting = new Set<string>();
    handle = (r) => {
      if (r.path === '/v1/links/east') return { status: 200, json: { link: { name: 'east' } } };
      const promote = /^\/v1\/mirrors\/([^/]+)\/promote$/.exec(r.path);
      if (promote) {
        states.set(promote[1]!, 'promoting');
        return { status: 200, json: mirror(promote[1]!, 'promoting') };
      }
      // A mirror seen promoting once is promoted at the next look.
      for (const [t, s] of states) if (s === 'promoting' && seenPromoting.has(t)) states.set(t, 'promoted');
      for (const [t, s] of states) if (s === 'promoting') seenPromoting.add(t);
      return { status: 200, json: [...[...states].map(([t, s]) => mirror(t, s, [0])), mirror('elsewhere', 'mirroring', [0], 'west')] };
    };
    const r = await run(migrateCommand, '--link', 'east', '--cutover', '--timeout-ms', '10000');
    expect(r.code).toBe(0);
    expect(posts()).toEqual(['/v1/mirrors/orders/promote']);
    expect(r.err).toBe('ledgerline migrate: mirror old is failed-over: it is not part of the cutover');
    const lines = r.out.split('\n').map((l) => (JSON.parse(l) as { mirrors: { topic: string; state: string }[] }).mirrors);
    expect(lines.at(-1)).toEqual([
      { topic: 'audit', state: 'promoted', lag: 0 },
      { topic: 'old', state: 'failed-over', lag: 0 },
      { topic: 'orders', state: 'promoted', lag: 0 },
      { topic: 'payments', state: 'promoted', lag: 0 },
    ]);
    // A line per change of states, not per poll.
    expect(new Set(lines.map((l) => JSON.stringify(l))).size).toBe(lines.length);
  });

  it('--cutover exits 1 at its timeout naming the mirrors not promoted, and for a link that does not exist', async () => {
    handle = (r) => {
      if (r.path === '/v1/links/east') return { status: 200, json: { link: { name: 'east' } } };
      if (r.path === '/v1/links/nope') return { status: 404, json: { error: 'cluster link nope does not exist' } };
      return r.method === 'POST' ? { status: 200, json: mirror('orders', 'promoting') } : { status: 200, json: [mirror('orders', seen.some((x) => x.method === 'POST') ? 'promoting' : 'mirroring', [2])] };
    };
    const r = await run(migrateCommand, '--link', 'east', '--cutover', '--timeout-ms', '1100');
    expect(r.code).toBe(1);
    expect(r.err).toBe('ledgerline migrate: the cutover of cluster link east did not finish within 1100 ms: orders is promoting');
    expect(posts()).toEqual(['/v1/mirrors/orders/promote']);
    expect(await run(migrateCommand, '--link', 'nope', '--cutover')).toEqual({ code: 1, out: '', err: 'ledgerline migrate: cluster link nope does not exist' });
  });

  it('exits 2 for usage errors, before any request', async () => {
    const usage = async (...args: string[]): Promise<string> => {
      const r = await run(migrateCommand, ...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/\nusage:\n  ledgerline migrate --link LINK/);
      return r.err.split('\n')[0]!;
    };
    expect(await usage()).toBe('ledgerline migrate: migrate needs --link');
    expect(await usage('--link', 'east')).toBe('ledgerline migrate: migrate needs --bootstrap');
    expect(await usage('--link', 'east', '--bootstrap', 'k:9092')).toBe('ledgerline migrate: migrate needs --topics');
    expect(await usage('--link', 'east', '--bootstrap', 'k:9092', '--topics', ' , ')).toBe('ledgerline migrate: --topics needs at least one name or prefix*');
    expect(await usage('--link', 'east', '--bootstrap', 'k:9092', '--topics', 'orders', '--interval-ms', '10')).toMatch(/--interval-ms must be a whole number of at least 100/);
    expect(await usage('--link', 'east', '--bootstrap', 'k:9092', '--topics', 'orders', '--timeout-ms', '10')).toBe('ledgerline migrate: --timeout-ms is not an option of migrate (without --cutover)');
    expect(await usage('--link', 'east', '--cutover', '--topics', 'orders')).toBe('ledgerline migrate: --topics is not an option of migrate --cutover');
    expect(await usage('now', '--link', 'east', '--cutover')).toBe('ledgerline migrate: unexpected argument "now"');
    expect(seen).toEqual([]);
  });
});
