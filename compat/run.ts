/**
 * Ledgerline's differential compatibility suite: every client × scenario against a real Apache Kafka
 * 4.4.0 and against Ledgerline in the same run, compared cell by cell. See compat/README.md.
 *
 *   npm run compat                          # install, start both brokers, run everything
 *   npm run compat -- --only kafka          # the reference alone (validates the scenario programs)
 *   npm run compat -- --clients java,kcat --scenarios metadata,produce-consume
 *   npm run compat -- --help
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ReferenceKafka, Ledgerline } from './lib/brokers.js';
import { LedgerlineCluster } from './lib/ledgerline-cluster.js';
import type { Broker, StartReport } from './lib/brokers.js';
import { CLIENTS } from './lib/clients.js';
import type { ClientDef } from './lib/clients.js';
import { compareOutcomes, parseOutcome, soloVerdict } from './lib/compare.js';
import type { CellStatus, Outcome } from './lib/compare.js';
import { expectedFailure, loadExpected, regressions as findRegressions, withNewSame, writeExpected } from './lib/expected.js';
import { install } from './lib/install.js';
import type { StepId, StepReport } from './lib/install.js';
import { COMPAT_DIR, WORK_DIR } from './lib/paths.js';
import { installExitHooks, run } from './lib/proc.js';
import { counts, markdownMatrix, terminalMatrix } from './lib/report.js';
import type { BrokerSummary, Cell, RunSummary } from './lib/report.js';
import { SCENARIOS } from './lib/scenarios.js';
import type { ScenarioDef } from './lib/scenarios.js';

const HELP = `Usage: npm run compat -- [options]

  --clients a,b        clients to run (default: all): ${CLIENTS.map((c) => c.id).join(', ')}
  --scenarios x,y      scenarios to run (default: all): ${SCENARIOS.map((s) => s.id).join(', ')}
  --only kafka|ledgerline|ledgerline-cluster
                       run against one broker only; cells are pass/fails on their own
  --candidate ledgerline|ledgerline-cluster|kafka
                       what is compared with the reference (default ledgerline); "kafka" starts a second,
                       independent Kafka, which must come out all "same" (checks the suite itself);
                       "ledgerline-cluster" is three brokers on ZooKeeper and three BookKeeper bookies
                       (compat/lib/ledgerline-cluster.ts; needs the compat/bookkeeper build)
  --jobs N             cells run at once (default 2; each cell runs against both brokers at once)
  --retries N          re-run a cell that differs (or fails against Kafka, or regressed) this many times
                       (default 1)
  --budget MINUTES     stop starting cells after this long (install included); the rest are not-run
  --no-install         use what compat/.work/ already holds
  --reinstall          redo the Maven and pip steps even when their inputs did not change
  --kafka-heap MiB     reference broker heap (default 512)
  --ledgerline-set k=v extra --set for Ledgerline (repeatable)
  --ledgerline-timeout seconds to wait for Ledgerline to serve (default 30)
  --build              rebuild dist/ first (otherwise only when src/ or protocol/ is newer than it)
  --update-expected    add every cell that is same now to compat/expected.json (none is removed)
  --strict-reference   exit non-zero when a scenario program fails against the reference Kafka too
  --require-pass       exit non-zero when any cell fails (with --only: every program's own checks must pass)
                       (by default such a cell is reported as inconclusive: it says nothing of Ledgerline)
  --no-write           do not write compat/results.json and compat/MATRIX.md
  --keep               keep brokers' data directories
  --serve              start the brokers, print their addresses and keep them up until Ctrl-C (for
                       working on a scenario program by hand); runs no scenario
  --help`;

interface Options {
  clients: ClientDef[];
  scenarios: ScenarioDef[];
  reference: boolean;
  candidate: 'ledgerline' | 'ledgerline-cluster' | 'kafka' | null;
  jobs: number;
  retries: number;
  budgetMs: number | null;
  install: boolean;
  reinstall: boolean;
  kafkaHeap: number;
  ledgerlineSettings: Record<string, string>;
  ledgerlineTimeoutMs: number;
  write: boolean;
  keep: boolean;
  serve: boolean;
  build: boolean;
  updateExpected: boolean;
  strictReference: boolean;
  requirePass: boolean;
}

function pick<T extends { id: string }>(all: readonly T[], list: string | undefined, what: string): T[] {
  if (list === undefined || list === '' || list === 'all') return [...all];
  const ids = list.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = ids.filter((id) => !all.some((x) => x.id === id));
  if (unknown.length > 0) throw new Error(`unknown ${what}: ${unknown.join(', ')} (known: ${all.map((x) => x.id).join(', ')})`);
  return all.filter((x) => ids.includes(x.id));
}

function parseOptions(argv: string[]): Options | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      clients: { type: 'string' },
      scenarios: { type: 'string' },
      only: { type: 'string' },
      candidate: { type: 'string' },
      jobs: { type: 'string' },
      retries: { type: 'string' },
      budget: { type: 'string' },
      'no-install': { type: 'boolean' },
      reinstall: { type: 'boolean' },
      'kafka-heap': { type: 'string' },
      'ledgerline-set': { type: 'string', multiple: true },
      'ledgerline-timeout': { type: 'string' },
      'no-write': { type: 'boolean' },
      keep: { type: 'boolean' },
      serve: { type: 'boolean' },
      build: { type: 'boolean' },
      'update-expected': { type: 'boolean' },
      'strict-reference': { type: 'boolean' },
      'require-pass': { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return null;
  }
  const only = values.only;
  if (only !== undefined && only !== 'kafka' && only !== 'ledgerline' && only !== 'ledgerline-cluster') throw new Error('--only takes kafka, ledgerline or ledgerline-cluster');
  const cand = values.candidate ?? 'ledgerline';
  if (cand !== 'kafka' && cand !== 'ledgerline' && cand !== 'ledgerline-cluster') throw new Error('--candidate takes ledgerline, ledgerline-cluster or kafka');
  const settings: Record<string, string> = {};
  for (const kv of values['ledgerline-set'] ?? []) {
    const eq = kv.indexOf('=');
    if (eq <= 0) throw new Error(`--ledgerline-set takes key=value, got ${kv}`);
    settings[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const reference = only !== 'ledgerline' && only !== 'ledgerline-cluster';
  const candidate = only === 'kafka' ? null : only === 'ledgerline' || only === 'ledgerline-cluster' ? only : cand;
  return {
    clients: pick(CLIENTS, values.clients, 'client'),
    scenarios: pick(SCENARIOS, values.scenarios, 'scenario'),
    reference,
    candidate,
    jobs: Math.max(1, Number(values.jobs ?? 2)),
    retries: Math.max(0, Number(values.retries ?? 1)),
    budgetMs: values.budget === undefined ? null : Number(values.budget) * 60_000,
    install: !values['no-install'],
    reinstall: Boolean(values.reinstall),
    kafkaHeap: Number(values['kafka-heap'] ?? 512),
    ledgerlineSettings: settings,
    ledgerlineTimeoutMs: Number(values['ledgerline-timeout'] ?? 30) * 1000,
    write: !values['no-write'],
    keep: Boolean(values.keep),
    serve: Boolean(values.serve),
    build: Boolean(values.build),
    updateExpected: Boolean(values['update-expected']),
    strictReference: Boolean(values['strict-reference']),
    requirePass: Boolean(values['require-pass']),
  };
}

function log(line: string): void {
  process.stderr.write(`[compat] ${line}\n`);
}

interface Side {
  broker: Broker;
  start: StartReport;
}

async function runProgram(side: Side | null, client: ClientDef, scenario: ScenarioDef, prefix: string): Promise<Outcome | undefined> {
  if (side === null) return undefined;
  if (!side.start.ok) return { ran: false, result: null, violations: [], reason: side.start.reason ?? 'broker did not start', ms: 0 };
  const gone = side.broker.exited();
  if (gone !== null) return { ran: false, result: null, violations: [], reason: `${side.broker.label}: ${gone}`, ms: 0 };
  const inv = client.invocation(scenario.id, side.broker.clientBootstrap(), prefix);
  const r = await run(inv.cmd, inv.args, { env: inv.env, timeoutMs: scenario.timeoutMs, cwd: COMPAT_DIR });
  const outcome = parseOutcome(r, prefix, scenario.timeoutMs);
  const after = side.broker.exited();
  if (after !== null && (!outcome.ran || outcome.violations.length > 0)) outcome.reason = `${side.broker.label}: ${after}`;
  return outcome;
}

function verdict(ref: Outcome | undefined, cand: Outcome | undefined, names: [string, string]): { status: CellStatus; reason?: string } {
  if (ref && cand) return compareOutcomes(ref, cand, names);
  const solo = ref ?? cand;
  return solo ? soloVerdict(solo) : { status: 'not-run' };
}

async function main(): Promise<number> {
  const opts = parseOptions(process.argv.slice(2));
  if (opts === null) return 0;
  installExitHooks();
  const t0 = Date.now();
  const runId = randomBytes(3).toString('hex');
  const date = new Date().toISOString();

  // 1. Install what the selected clients and brokers need.
  const steps = new Set<StepId>();
  for (const c of opts.clients) for (const s of c.needs) steps.add(s);
  if (opts.reference || opts.candidate === 'kafka' || opts.candidate === 'ledgerline-cluster') steps.add('maven');
  let installed = new Map<StepId, StepReport>();
  if (opts.install) installed = await install(steps, opts.reinstall, log);
  const installMs = Date.now() - t0;

  // 2. Start the brokers side by side.
  const logs = join(WORK_DIR, 'logs');
  await rm(logs, { recursive: true, force: true });
  const brokers: { ref: Broker | null; cand: Broker | null } = {
    ref: opts.reference ? new ReferenceKafka({ label: 'kafka', heapMiB: opts.kafkaHeap, keepData: opts.keep, logDir: join(logs, 'kafka') }) : null,
    cand:
      opts.candidate === 'ledgerline'
        ? new Ledgerline({ settings: opts.ledgerlineSettings, keepData: opts.keep, readyTimeoutMs: opts.ledgerlineTimeoutMs, logDir: join(logs, 'ledgerline'), build: opts.build })
        : opts.candidate === 'ledgerline-cluster'
          ? new LedgerlineCluster({ settings: opts.ledgerlineSettings, keepData: opts.keep })
          : opts.candidate === 'kafka'
            ? new ReferenceKafka({ label: 'kafka#2', heapMiB: opts.kafkaHeap, keepData: opts.keep, logDir: join(logs, 'kafka2') })
            : null,
  };
  const mavenFailed = installed.get('maven')?.ok === false;
  const startOne = async (b: Broker | null): Promise<Side | null> => {
    if (b === null) return null;
    if (b.kind === 'kafka' && mavenFailed) return { broker: b, start: { ok: false, reason: `Kafka not installed: ${installed.get('maven')?.reason}`, startupMs: 0 } };
    let start = await b.start();
    if (!start.ok) {
      // Once more on fresh ports and a fresh directory: a port taken between choosing and binding it, or a
      // start that lost the machine to the other broker's, is not worth a matrix of inconclusive cells.
      log(`${b.label}: did not start (${start.reason}); starting it once more`);
      await b.stop().catch(() => undefined);
      start = await b.start();
    }
    if (b instanceof Ledgerline && b.buildNote) log(`ledgerline: ${b.buildNote}`);
    log(`${b.label}: ${start.ok ? `serving on ${b.bootstrap} after ${(start.startupMs / 1000).toFixed(1)} s` : `NOT SERVING: ${start.reason}`}`);
    return { broker: b, start };
  };
  const [refSide, candSide] = await Promise.all([startOne(brokers.ref), startOne(brokers.cand)]);
  const names: [string, string] = [brokers.ref?.label ?? 'kafka', brokers.cand?.label ?? 'ledgerline'];
  if (opts.serve) {
    for (const side of [refSide, candSide]) if (side?.start.ok) console.log(`${side.broker.label} ${side.broker.bootstrap}`);
    await new Promise<void>((resolve) => process.once('SIGINT', resolve));
    await Promise.all([refSide?.broker.stop(), candSide?.broker.stop()]);
    return 0;
  }

  // 3. Every client × scenario.
  const expectedFile = join(COMPAT_DIR, 'expected.json');
  const expected = loadExpected(expectedFile);
  const tCells = Date.now();
  const cells: Cell[] = [];
  const queue: Array<{ client: ClientDef; scenario: ScenarioDef }> = [];
  for (const client of opts.clients) for (const scenario of opts.scenarios) queue.push({ client, scenario });
  const runCell = async (client: ClientDef, scenario: ScenarioDef): Promise<Cell> => {
    const key = `${client.id}/${scenario.id}`;
    const na = client.na[scenario.id];
    if (na !== undefined) return { client: client.id, scenario: scenario.id, status: 'n/a', reason: na };
    const missing = client.needs.map((s) => installed.get(s)).find((r) => r !== undefined && !r.ok);
    if (missing) return { client: client.id, scenario: scenario.id, status: 'fails', reason: `install ${missing.step} failed: ${missing.reason}` };
    // A candidate that never came up fails every cell at once; running the reference side is moot.
    if (candSide !== null && !candSide.start.ok) return { client: client.id, scenario: scenario.id, status: 'fails', reason: candSide.start.reason };
    let first: Cell['firstAttempt'];
    for (let attempt = 0; ; attempt++) {
      const prefix = `${scenario.id}-${client.id}-${runId}${attempt > 0 ? `r${attempt}` : ''}`;
      const [ref, cand] = await Promise.all([runProgram(refSide, client, scenario, prefix), runProgram(candSide, client, scenario, prefix)]);
      let v = verdict(ref, cand, names);
      // A second attempt is for what may be flaky: a difference, a failure against Kafka itself, or a
      // failure of a cell known same. A failure against a broker that lacks a feature is deterministic,
      // and retrying it would only double the time of every such cell.
      const worthRetry = v.status === 'differs' || v.status === 'ref-fails' || (v.status === 'fails' && expected.same.includes(key));
      const brokersUp = (refSide?.start.ok ?? true) && (candSide?.start.ok ?? true);
      if (!worthRetry || !brokersUp || attempt >= opts.retries) {
        const repeated = first !== undefined && first.status === v.status && first.reason === v.reason;
        const ef = expectedFailure(expected, key);
        if (ef && brokers.cand?.kind === 'ledgerline' && v.status !== 'same' && v.status !== 'pass') v = { status: v.status, reason: `(expected: ${ef}) ${v.reason ?? ''}`.trim() };
        const cell: Cell = { client: client.id, scenario: scenario.id, status: v.status, reason: v.reason, reference: ref, candidate: cand };
        if (first && !repeated) cell.firstAttempt = first;
        log(`${key}: ${v.status}${v.reason ? ` (${v.reason})` : ''} [${(((ref?.ms ?? 0) + (cand?.ms ?? 0)) / 1000).toFixed(1)} s]`);
        return cell;
      }
      first ??= v;
      log(`${key}: ${v.status} (${v.reason ?? ''}), retrying`);
    }
  };
  const results = new Map<string, Cell>();
  const workers = Array.from({ length: Math.min(opts.jobs, queue.length) }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const key = `${next.client.id}/${next.scenario.id}`;
      if (opts.budgetMs !== null && Date.now() - t0 > opts.budgetMs) {
        results.set(key, { client: next.client.id, scenario: next.scenario.id, status: 'not-run', reason: `time budget of ${opts.budgetMs / 60_000} min used up` });
        continue;
      }
      results.set(key, await runCell(next.client, next.scenario));
    }
  });
  await Promise.all(workers);
  for (const client of opts.clients) for (const scenario of opts.scenarios) {
    const c = results.get(`${client.id}/${scenario.id}`);
    if (c) cells.push(c);
  }
  const cellsMs = Date.now() - tCells;

  // 4. Stop the brokers (peak memory is read just before).
  const summarise = async (side: Side | null): Promise<BrokerSummary | null> => {
    if (side === null) return null;
    const { peakRssMiB } = await side.broker.stop();
    return {
      label: side.broker.label,
      bootstrap: side.broker.bootstrap,
      started: side.start.ok,
      reason: side.start.reason,
      startupMs: side.start.startupMs,
      peakRssMiB,
      logFile: side.broker.logFile,
    };
  };
  const [refSummary, candSummary] = await Promise.all([summarise(refSide), summarise(candSide)]);

  // 5. Regressions: a cell known `same` against Ledgerline that is not `same` now.
  // A cell whose program failed against Kafka as well is inconclusive, not a Ledgerline regression.
  const judged = cells.filter((c) => c.status !== 'ref-fails');
  const regressions = brokers.ref !== null && brokers.cand?.kind === 'ledgerline' ? findRegressions(expected, judged) : [];
  const refFailures = cells.filter((c) => c.status === 'ref-fails' || (brokers.cand === null && c.status === 'fails'));

  const mode = brokers.ref && brokers.cand ? `${names[0]} vs ${names[1]}` : brokers.ref ? 'kafka only' : 'ledgerline only';
  const summary: RunSummary = {
    date,
    runId,
    mode,
    reference: refSummary,
    candidate: candSummary,
    install: [...installed.values()],
    installMs,
    cellsMs,
    totalMs: Date.now() - t0,
    clients: opts.clients.map((c) => ({ id: c.id, label: c.label })),
    scenarios: opts.scenarios.map((s) => s.id),
    cells,
    regressions,
  };
  console.log(terminalMatrix(summary, opts.clients, opts.scenarios));
  console.log('');
  console.log(`${mode}: ${counts(cells)}. install ${(installMs / 1000).toFixed(0)} s, scenarios ${(cellsMs / 1000).toFixed(0)} s, total ${(summary.totalMs / 1000).toFixed(0)} s.`);
  for (const b of [refSummary, candSummary]) {
    if (b) console.log(`${b.label}: ${b.started ? `startup ${(b.startupMs / 1000).toFixed(1)} s, peak RSS ${b.peakRssMiB ?? '?'} MiB` : `did not start: ${b.reason}`} (log ${b.logFile})`);
  }
  if (opts.write) {
    await mkdir(COMPAT_DIR, { recursive: true });
    await writeFile(join(COMPAT_DIR, 'results.json'), JSON.stringify(summary, null, 2) + '\n');
    await writeFile(join(COMPAT_DIR, 'MATRIX.md'), markdownMatrix(summary, opts.clients, opts.scenarios));
    console.log('wrote compat/results.json and compat/MATRIX.md');
  }
  if (opts.updateExpected && brokers.ref !== null && brokers.cand?.kind === 'ledgerline') {
    const { next, added } = withNewSame(expected, cells);
    const order = (k: string): number => {
      const [c, sc] = k.split('/');
      return CLIENTS.findIndex((x) => x.id === c) * 1000 + SCENARIOS.findIndex((x) => x.id === sc);
    };
    await writeExpected(expectedFile, next, order);
    console.log(`compat/expected.json: ${added.length} cell(s) added${added.length > 0 ? `: ${added.join(', ')}` : ''}`);
  }
  for (const r of regressions) console.log(`REGRESSION: ${r}`);
  if (refFailures.length > 0) {
    console.log(`${refFailures.length} cell(s) failed against the reference Kafka (${refFailures.map((c) => `${c.client}/${c.scenario}`).join(', ')}): inconclusive for Ledgerline; the scenario programs need a look.`);
  }
  const failed = cells.filter((c) => c.status === 'fails');
  if (opts.requirePass && failed.length > 0) console.log(`FAILED: ${failed.map((c) => `${c.client}/${c.scenario}`).join(', ')}`);
  // A broker that never started leaves every cell ref-fails or fails: the run compared nothing, which must not
  // read as a pass.
  const notStarted = [refSide, candSide].filter((side) => side !== null && !side.start.ok).map((side) => side!.broker.label);
  if (notStarted.length > 0) console.log(`NOT COMPARED: ${notStarted.join(' and ')} did not start; no cell was judged`);
  return regressions.length > 0 || notStarted.length > 0 || (opts.strictReference && refFailures.length > 0) || (opts.requirePass && failed.length > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(2);
  },
);
