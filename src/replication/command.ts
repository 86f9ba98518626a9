/**
 * `ledgerline links`, `ledgerline mirrors` and `ledgerline migrate`: cluster links, mirror topics and the migration
 * from a live Kafka cluster, through a broker's admin HTTP endpoint (admin-routes.ts), as `ledgerline tenants`
 * (src/tenants/tenants-command.ts) does for tenants and Confluent's `kafka-cluster-links` / `kafka-mirrors` do for
 * Cluster Linking.
 *
 *   ledgerline links put east --bootstrap 10.0.0.1:9092,10.0.0.2:9092 --security-protocol SASL_SSL \
 *       --sasl-mechanism SCRAM-SHA-512 --username mirror --password-file pw.txt --ca-file ca.pem
 *   ledgerline mirrors create orders --link east
 *   ledgerline mirrors promote orders --wait
 *
 * `links put` sends only the settings given: the broker fills in the defaults of model.ts, and replaces the whole
 * link. `promote --wait` and `failover --wait` poll the mirror every 500 ms until it is promoted (failed-over),
 * within --timeout-ms (default 120000).
 *
 * The migration from a live Kafka cluster:
 *
 *   1. ledgerline migrate --link east --bootstrap kafka-1:9092 --topics 'orders*,payments' [--groups 'billing-*']
 *        stores the link with autoMirrorTopics (the controller creates a mirror for each source topic they
 *        select) and prints one status line per --interval-ms (default 5000) until Ctrl-C:
 *          {"atMs":...,"link":"east","mirrors":[{"topic":"orders","state":"mirroring","lag":12}]}
 *        with --until-caught-up it ends (0) once every exact name of --topics has a mirror and every mirror still
 *        copying has lag 0
 *   2. stop the producers on the Kafka cluster; `migrate ... --until-caught-up` ends when the last records are here
 *   3. ledgerline migrate --link east --cutover [--timeout-ms 120000]
 *        promotes every mirror of the link still mirroring and waits until all are promoted, printing a status
 *        line whenever a state changes
 *   4. move producers and consumers to Ledgerline: groups resume at the offsets the link synced
 *
 * A mirror's lag is the answering broker's figure (admin-routes.ts): the sum over the partitions it copies, null
 * when it copies none of them yet or has not fetched one yet. In a cluster of several brokers, each reports only
 * the partitions it leads.
 *
 * Exit status: 0 done (and on Ctrl-C while following a migration), 1 refused or not found (the broker's message on
 * stderr), the endpoint unreachable, or a wait that timed out, 2 a usage error. A poll that cannot reach the
 * endpoint is retried until the wait's deadline; a migration being followed retries it at the next interval.
 */
import { readFile } from 'node:fs/promises';
import { AdminClient, adminBase, needName, noMoreArguments, onlyOptions, parse, pretty, RequestError, run, unknownSubcommand, UsageError, type OptionSpec, type Parsed, type Writer } from '../observability/admin-command.js';
import { SASL_MECHANISMS, SECURITY_PROTOCOLS, isReadOnly, type MirrorState } from './model.js';
import { LINKS_USAGE, MIGRATE_USAGE, MIRRORS_USAGE } from './usage.js';

const LINKS_PATH = '/v1/links';
const MIRRORS_PATH = '/v1/mirrors';

/** How often a wait asks for the mirrors' states. */
const POLL_MS = 500;
const DEFAULT_WAIT_MS = 120_000;
const DEFAULT_INTERVAL_MS = 5_000;

// ---- options ------------------------------------------------------------------------------------------

const SECURITY_OPTIONS = ['security-protocol', 'sasl-mechanism', 'username', 'password', 'password-file', 'ca-file'];

const LINKS_OPTIONS: OptionSpec = {
  values: ['admin', 'file', 'bootstrap', ...SECURITY_OPTIONS, 'offset-sync-interval-ms', 'metadata-sync-interval-ms'],
  lists: ['group-filter', 'auto-mirror'],
  flags: ['no-group-offsets'],
};
const MIRRORS_OPTIONS: OptionSpec = { values: ['admin', 'link', 'source-topic', 'timeout-ms'], flags: ['wait'] };
const MIGRATE_OPTIONS: OptionSpec = {
  values: ['admin', 'link', 'bootstrap', 'topics', 'groups', ...SECURITY_OPTIONS, 'interval-ms', 'timeout-ms'],
  flags: ['until-caught-up', 'cutover'],
};

function required(p: Parsed, name: string, where: string): string {
  const v = p.values.get(name);
  if (v === undefined) throw new UsageError(`${where} needs --${name}`);
  return v;
}

/** A whole number option; undefined when absent. */
function intOption(p: Parsed, name: string, min: number): number | undefined {
  const v = p.values.get(name);
  if (v === undefined) return undefined;
  const n = /^[0-9]{1,15}$/.test(v) ? Number(v) : NaN;
  if (!(n >= min)) throw new UsageError(`--${name} must be a whole number of at least ${min}, got ${JSON.stringify(v)}`);
  return n;
}

/** A comma-separated option (`--topics 'orders*,payments'`); undefined when absent. */
function listOption(p: Parsed, name: string): string[] | undefined {
  const v = p.values.get(name);
  if (v === undefined) return undefined;
  const items = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new UsageError(`--${name} needs at least one name or prefix*`);
  return items;
}

function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
  return value as T;
}

async function readText(file: string, option: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${option} ${file}: ${(err as Error).message}`);
  }
}

// ---- the admin endpoint -----------------------------------------------------------------------------------

function linkPath(name: string): string {
  return `${LINKS_PATH}/${encodeURIComponent(name)}`;
}

function mirrorPath(topic: string): string {
  return `${MIRRORS_PATH}/${encodeURIComponent(topic)}`;
}

/** A mirror as GET /v1/mirrors answers it: the record and the partitions the answering broker copies. */
interface MirrorView {
  readonly topic: string;
  readonly link: string;
  readonly sourceTopic: string;
  readonly state: MirrorState;
  readonly partitions?: readonly { readonly lag?: unknown }[];
}

function isMirror(json: unknown): json is MirrorView {
  const m = json as Partial<MirrorView> | null;
  return typeof m === 'object' && m !== null && typeof m.topic === 'string' && typeof m.link === 'string' && typeof m.state === 'string';
}

function asMirror(json: unknown): MirrorView {
  if (!isMirror(json)) throw new RequestError(`the admin endpoint answered something that is not a mirror: ${JSON.stringify(json)}`);
  return json;
}

/** The mirrors of one link in a GET /v1/mirrors answer, by topic. */
function linkMirrors(json: unknown, link: string): MirrorView[] {
  if (!Array.isArray(json)) throw new RequestError(`the admin endpoint answered something that is not a list of mirrors: ${JSON.stringify(json)}`);
  return json.filter(isMirror).filter((m) => m.link === link).sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
}

/** The sum of the partitions' lag; null when no partition is reported or one's lag is not known yet (-1). */
function totalLag(m: MirrorView): number | null {
  const parts = m.partitions ?? [];
  if (parts.length === 0 || parts.some((x) => typeof x.lag !== 'number' || x.lag < 0)) return null;
  return parts.reduce((sum, x) => sum + (x.lag as number), 0);
}

function statusLine(link: string, mirrors: readonly MirrorView[]): string {
  return JSON.stringify({ atMs: Date.now(), link, mirrors: mirrors.map((m) => ({ topic: m.topic, state: m.state, lag: totalLag(m) })) });
}

// ---- waiting ---------------------------------------------------------------------------------------------

/** Resolves after `ms`, or as soon as `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Every POLL_MS until the deadline, calls `check` (with the time left for its request) until it answers a
 * result; a check that cannot reach the endpoint is tried again. Past the deadline, throws `late(lastFailure)`.
 */
async function pollUntil<T>(deadlineMs: number, check: (timeoutMs: number) => Promise<T | undefined>, late: (lastFailure: string | null) => Error): Promise<T> {
  let failure: string | null = null;
  for (;;) {
    await pause(Math.min(POLL_MS, deadlineMs - Date.now()));
    const left = deadlineMs - Date.now();
    if (left <= 0) throw late(failure);
    try {
      const result = await check(left);
      if (result !== undefined) return result;
      failure = null;
    } catch (e) {
      if (!(e instanceof RequestError && e.unreachable)) throw e;
      // A poll cut short by the wait's own deadline says nothing about the endpoint: the wait is over.
      if (e.timedOut && Date.now() >= deadlineMs) throw late(failure);
      failure = e.message;
    }
  }
}

/** Whether a mirror in `state` can no longer reach `target` (model.ts's state diagram). */
function cannotBecome(state: MirrorState, target: 'promoted' | 'failed-over'): boolean {
  return target === 'promoted' ? state === 'failing-over' || state === 'failed-over' : state === 'promoted';
}

function lateSuffix(failure: string | null): string {
  return failure === null ? '' : ` (the last poll failed: ${failure})`;
}

/** Polls one mirror until it is in `target`; RequestError when it cannot get there or the time is up. */
async function waitForMirror(admin: AdminClient, first: MirrorView, target: 'promoted' | 'failed-over', timeoutMs: number): Promise<MirrorView> {
  const deadline = Date.now() + timeoutMs;
  let last = first;
  const settled = (m: MirrorView): MirrorView | undefined => {
    last = m;
    if (m.state === target) return m;
    if (cannotBecome(m.state, target)) throw new RequestError(`mirror ${m.topic} is ${m.state}: it cannot become ${target}`);
    return undefined;
  };
  return (
    settled(first) ??
    pollUntil(
      deadline,
      async (left) => settled(asMirror(await admin.request('GET', mirrorPath(first.topic), undefined, { timeoutMs: left }))),
      (failure) => new RequestError(`mirror ${first.topic} did not become ${target} within ${timeoutMs} ms: it is ${last.state}${lateSuffix(failure)}`),
    )
  );
}

// ---- the commands ----------------------------------------------------------------------------------------

/** Runs `ledgerline links ...`; returns the exit status. */
export async function linksCommand(args: string[], out: Writer = console.log, err: Writer = console.error): Promise<number> {
  return run('links', LINKS_USAGE, err, async () => {
    const p = parse(args, LINKS_OPTIONS);
    const sub = p.positional.shift();
    const admin = new AdminClient(adminBase(p));
    const show = pretty(out);
    switch (sub) {
      case 'list':
        onlyOptions(p, [], 'links list');
        noMoreArguments(p.positional);
        show(await admin.request('GET', LINKS_PATH));
        return 0;
      case 'get':
        onlyOptions(p, [], 'links get');
        show(await admin.request('GET', linkPath(needName(p.positional, 'get', 'a link name'))));
        return 0;
      case 'put': {
        const name = needName(p.positional, 'put', 'a link name');
        show(await admin.request('PUT', linkPath(name), await linkBody(p)));
        return 0;
      }
      case 'delete':
        onlyOptions(p, [], 'links delete');
        await admin.request('DELETE', linkPath(needName(p.positional, 'delete', 'a link name')));
        return 0;
      default:
        throw unknownSubcommand(sub);
    }
  });
}

/** The body of `links put`: --file's object, or the settings given as options. */
async function linkBody(p: Parsed): Promise<Record<string, unknown>> {
  const file = p.values.get('file');
  if (file !== undefined) {
    const other = p.given.find((o) => o !== 'admin' && o !== 'file');
    if (other !== undefined) throw new UsageError(`--file describes the whole link: no --${other} with it`);
    return readLinkFile(file);
  }
  const bootstrap = p.values.get('bootstrap');
  if (bootstrap === undefined) throw new UsageError('put needs --bootstrap HOST:PORT[,HOST:PORT...] or --file');
  return { bootstrapServers: bootstrap, ...(await securitySettings(p)), ...syncSettings(p) };
}

async function readLinkFile(file: string): Promise<Record<string, unknown>> {
  const text = await readText(file, '--file');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--file ${file} is not JSON: ${(err as Error).message}`);
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new UsageError(`--file ${file} must hold a JSON object`);
  return json as Record<string, unknown>;
}

/** securityProtocol, sasl and tls from the options given (`links put`, `migrate`). */
async function securitySettings(p: Parsed): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const protocol = p.values.get('security-protocol');
  if (protocol !== undefined) body.securityProtocol = oneOf('security-protocol', protocol, SECURITY_PROTOCOLS);
  const sasl = await saslSettings(p);
  if (sasl !== undefined) body.sasl = sasl;
  const caFile = p.values.get('ca-file');
  if (caFile !== undefined) body.tls = { ca: await readText(caFile, '--ca-file') };
  return body;
}

async function saslSettings(p: Parsed): Promise<Record<string, string> | undefined> {
  const [mechanism, username, password, passwordFile] = ['sasl-mechanism', 'username', 'password', 'password-file'].map((o) => p.values.get(o));
  if (mechanism === undefined && username === undefined && password === undefined && passwordFile === undefined) return undefined;
  if (mechanism === undefined || username === undefined || (password === undefined) === (passwordFile === undefined)) {
    throw new UsageError('SASL needs --sasl-mechanism, --username and one of --password or --password-file');
  }
  // A password file's last line break is not part of the password (`echo secret > pw.txt`).
  const secret = password ?? (await readText(passwordFile!, '--password-file')).replace(/\r?\n$/, '');
  return { mechanism: oneOf('sasl-mechanism', mechanism, SASL_MECHANISMS), username, password: secret };
}

/** groupFilters, syncGroupOffsets, autoMirrorTopics and the sync intervals from the options given. */
function syncSettings(p: Parsed): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const groups = p.lists.get('group-filter');
  if (groups !== undefined) body.groupFilters = groups;
  if (p.flags.has('no-group-offsets')) body.syncGroupOffsets = false;
  const topics = p.lists.get('auto-mirror');
  if (topics !== undefined) body.autoMirrorTopics = topics;
  const offsetSync = intOption(p, 'offset-sync-interval-ms', 0);
  if (offsetSync !== undefined) body.offsetSyncIntervalMs = offsetSync;
  const metadataSync = intOption(p, 'metadata-sync-interval-ms', 0);
  if (metadataSync !== undefined) body.metadataSyncIntervalMs = metadataSync;
  return body;
}

/** Runs `ledgerline mirrors ...`; returns the exit status. */
export async function mirrorsCommand(args: string[], out: Writer = console.log, err: Writer = console.error): Promise<number> {
  return run('mirrors', MIRRORS_USAGE, err, async () => {
    const p = parse(args, MIRRORS_OPTIONS);
    const sub = p.positional.shift();
    const admin = new AdminClient(adminBase(p));
    const show = pretty(out);
    switch (sub) {
      case 'list':
        onlyOptions(p, [], 'mirrors list');
        noMoreArguments(p.positional);
        show(await admin.request('GET', MIRRORS_PATH));
        return 0;
      case 'get':
        onlyOptions(p, [], 'mirrors get');
        show(await admin.request('GET', mirrorPath(needName(p.positional, 'get', 'a topic name'))));
        return 0;
      case 'create': {
        onlyOptions(p, ['link', 'source-topic'], 'mirrors create');
        const topic = needName(p.positional, 'create', 'a topic name');
        const link = required(p, 'link', 'create');
        const source = p.values.get('source-topic');
        show(await admin.request('POST', MIRRORS_PATH, { topic, link, ...(source !== undefined ? { sourceTopic: source } : {}) }));
        return 0;
      }
      case 'promote':
      case 'failover':
        show(await changeState(admin, p, sub));
        return 0;
      default:
        throw unknownSubcommand(sub);
    }
  });
}

/** `mirrors promote|failover TOPIC [--wait [--timeout-ms N]]`: the mirror as answered, or as it ends the wait. */
async function changeState(admin: AdminClient, p: Parsed, action: 'promote' | 'failover'): Promise<MirrorView> {
  onlyOptions(p, ['wait', 'timeout-ms'], `mirrors ${action}`);
  const topic = needName(p.positional, action, 'a topic name');
  const timeoutMs = intOption(p, 'timeout-ms', 1);
  const wait = p.flags.has('wait');
  if (timeoutMs !== undefined && !wait) throw new UsageError('--timeout-ms is for --wait');
  const first = asMirror(await admin.request('POST', `${mirrorPath(topic)}/${action}`));
  if (!wait) return first;
  return waitForMirror(admin, first, action === 'promote' ? 'promoted' : 'failed-over', timeoutMs ?? DEFAULT_WAIT_MS);
}

/**
 * Runs `ledgerline migrate ...`; returns the exit status. Following a migration ends when `stop` aborts (by
 * default: on SIGINT, with status 0).
 */
export async function migrateCommand(args: string[], out: Writer = console.log, err: Writer = console.error, stop?: AbortSignal): Promise<number> {
  return run('migrate', MIGRATE_USAGE, err, async () => {
    const p = parse(args, MIGRATE_OPTIONS);
    noMoreArguments(p.positional);
    const link = required(p, 'link', 'migrate');
    const admin = new AdminClient(adminBase(p));
    if (p.flags.has('cutover')) return cutover(admin, p, link, out, err);
    const plan = await migrationPlan(p, link);
    await admin.request('PUT', linkPath(link), plan.body);
    err(`ledgerline migrate: link ${link} stored, mirroring ${plan.topics.join(', ')}; a status line every ${plan.intervalMs} ms ${plan.untilCaughtUp ? 'until every mirror has caught up' : 'until interrupted'}`);
    return stop ? follow(admin, plan, stop, out, err) : withSigint((signal) => follow(admin, plan, signal, out, err));
  });
}

/** What `migrate` (without --cutover) stores and follows. */
interface MigrationPlan {
  readonly link: string;
  readonly body: Record<string, unknown>;
  readonly topics: readonly string[];
  readonly intervalMs: number;
  readonly untilCaughtUp: boolean;
}

async function migrationPlan(p: Parsed, link: string): Promise<MigrationPlan> {
  onlyOptions(p, ['link', 'bootstrap', 'topics', 'groups', ...SECURITY_OPTIONS, 'interval-ms', 'until-caught-up'], 'migrate (without --cutover)');
  const bootstrap = required(p, 'bootstrap', 'migrate');
  const topics = listOption(p, 'topics');
  if (topics === undefined) throw new UsageError('migrate needs --topics');
  const groups = listOption(p, 'groups') ?? ['*'];
  const intervalMs = intOption(p, 'interval-ms', 100) ?? DEFAULT_INTERVAL_MS;
  const body = { bootstrapServers: bootstrap, ...(await securitySettings(p)), autoMirrorTopics: topics, groupFilters: groups };
  return { link, body, topics, intervalMs, untilCaughtUp: p.flags.has('until-caught-up') };
}

/** Runs `fn` with a signal that SIGINT aborts (instead of ending the process), for as long as it runs. */
async function withSigint<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const ctl = new AbortController();
  const onSigint = (): void => ctl.abort();
  process.on('SIGINT', onSigint);
  try {
    return await fn(ctl.signal);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/** Prints a status line per interval until `signal` aborts or, with --until-caught-up, the mirrors caught up. */
async function follow(admin: AdminClient, plan: MigrationPlan, signal: AbortSignal, out: Writer, err: Writer): Promise<number> {
  while (!signal.aborted) {
    try {
      const mirrors = linkMirrors(await admin.request('GET', MIRRORS_PATH, undefined, { signal }), plan.link);
      out(statusLine(plan.link, mirrors));
      if (plan.untilCaughtUp && caughtUp(mirrors, plan.topics)) return 0;
    } catch (e) {
      if (signal.aborted) break;
      if (!(e instanceof RequestError && e.unreachable)) throw e;
      err(`ledgerline migrate: ${e.message}; trying again in ${plan.intervalMs} ms`);
    }
    await pause(plan.intervalMs, signal);
  }
  return 0;
}

/**
 * Whether the migration caught up: every exact name of --topics has a mirror (prefixes select topics this
 * command cannot list), there is at least one, and every mirror still copying has a known lag of 0.
 */
function caughtUp(mirrors: readonly MirrorView[], topics: readonly string[]): boolean {
  const exact = topics.filter((t) => !t.endsWith('*'));
  return (
    mirrors.length > 0 &&
    exact.every((t) => mirrors.some((m) => m.sourceTopic === t)) &&
    mirrors.every((m) => !isReadOnly(m.state) || totalLag(m) === 0)
  );
}

/** `migrate --link L --cutover`: promotes the link's mirrors still mirroring, waits until all are promoted. */
async function cutover(admin: AdminClient, p: Parsed, link: string, out: Writer, err: Writer): Promise<number> {
  onlyOptions(p, ['link', 'cutover', 'timeout-ms'], 'migrate --cutover');
  const timeoutMs = intOption(p, 'timeout-ms', 1) ?? DEFAULT_WAIT_MS;
  const deadline = Date.now() + timeoutMs;
  await admin.request('GET', linkPath(link)); // the link's 404, rather than "no mirrors"
  const mirrors = linkMirrors(await admin.request('GET', MIRRORS_PATH), link);
  const promotable = mirrors.filter((m) => !cannotBecome(m.state, 'promoted'));
  for (const m of mirrors) if (cannotBecome(m.state, 'promoted')) err(`ledgerline migrate: mirror ${m.topic} is ${m.state}: it is not part of the cutover`);
  if (promotable.length === 0) {
    throw new RequestError(mirrors.length === 0 ? `cluster link ${link} has no mirror topics: nothing to cut over` : `no mirror of cluster link ${link} can be promoted`);
  }
  for (const m of promotable) if (m.state === 'mirroring') await admin.request('POST', `${mirrorPath(m.topic)}/promote`);
  await waitForPromotion(admin, link, new Set(promotable.map((m) => m.topic)), deadline, timeoutMs, out);
  return 0;
}

/** Polls the link's mirrors, printing a status line whenever a state changes, until those in `topics` are promoted. */
async function waitForPromotion(admin: AdminClient, link: string, topics: ReadonlySet<string>, deadline: number, timeoutMs: number, out: Writer): Promise<void> {
  let printed = '';
  let last: MirrorView[] = [];
  const check = async (left: number): Promise<true | undefined> => {
    last = linkMirrors(await admin.request('GET', MIRRORS_PATH, undefined, { timeoutMs: left }), link);
    const states = last.map((m) => `${m.topic}=${m.state}`).join(' ');
    if (states !== printed) out(statusLine(link, last));
    printed = states;
    const waited = last.filter((m) => topics.has(m.topic));
    const missing = [...topics].find((t) => !waited.some((m) => m.topic === t));
    if (missing !== undefined) throw new RequestError(`mirror ${missing} of cluster link ${link} is no longer listed`);
    const lost = waited.find((m) => cannotBecome(m.state, 'promoted'));
    if (lost) throw new RequestError(`mirror ${lost.topic} became ${lost.state} during the cutover: it cannot be promoted`);
    return waited.every((m) => m.state === 'promoted') ? true : undefined;
  };
  const late = (failure: string | null): Error => {
    const pending = last.filter((m) => topics.has(m.topic) && m.state !== 'promoted').map((m) => `${m.topic} is ${m.state}`);
    return new RequestError(`the cutover of cluster link ${link} did not finish within ${timeoutMs} ms: ${pending.join(', ') || 'no answer yet'}${lateSuffix(failure)}`);
  };
  await pollUntil(deadline, check, late);
}
