/**
 * `npm run bench -- smoke`: proves the harness end to end in about ten seconds (what CI runs). It starts a
 * broker (Ledgerline by default, rebuilt first if dist/ is stale; `--broker kafka` for Apache Kafka;
 * `--broker auto` falls back to Kafka when Ledgerline cannot serve), runs the `smoke` workload, checks the
 * result and writes it under bench/results/ like any run.
 *
 * Checks: records were produced and acknowledged at (at least half) the target rate, every produced record
 * was consumed, no request failed, and both latency histograms have samples. Exit code 1 otherwise.
 */
import type { StartedBroker } from './lib/brokers.js';
import { startBroker } from './lib/brokers.js';
import { WORKLOAD_HELP, logger, parse, workloadFromArgs } from './lib/cli.js';
import { executeWorkload } from './lib/execute.js';
import type { RunFile } from './lib/report.js';
import { hostInfo, runId, runMarkdown, writeResults } from './lib/report.js';

const HELP = `Usage: npm run bench -- smoke [options]

  --broker B          ledgerline (default), kafka, or auto (Ledgerline, else Kafka)
  --workload NAME     default smoke
  --no-write          print the summary only
${WORKLOAD_HELP}`;

export default async function smoke(args: string[]): Promise<void> {
  const { values } = parse(args, {
    broker: { type: 'string' },
    workload: { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const choice = values.broker ?? 'ledgerline';
  if (!['ledgerline', 'kafka', 'auto'].includes(choice)) throw new Error('--broker takes ledgerline, kafka or auto');
  const workload = workloadFromArgs(values.workload ?? 'smoke', values);
  const log = logger();
  const date = new Date();

  let broker: StartedBroker | null = null;
  const reasons: string[] = [];
  for (const kind of choice === 'auto' ? (['ledgerline', 'kafka'] as const) : [choice as 'ledgerline' | 'kafka']) {
    const b = await startBroker(kind, { log, kafkaHeapMiB: 512 });
    if ('error' in b) {
      reasons.push(`${kind}: ${b.error}`);
      log(`${kind} cannot serve: ${b.error}`);
      continue;
    }
    broker = b;
    break;
  }
  if (!broker) {
    console.error(`smoke: no broker to run against (${reasons.join('; ')})`);
    process.exitCode = 1;
    return;
  }

  const rate = workload.rate.kind === 'fixed' ? workload.rate.messagesPerSecond : null;
  let file: RunFile;
  try {
    const r = await executeWorkload({ bootstrap: broker.bootstrap, workload, rate, log });
    const died = broker.exited();
    if (died) throw new Error(`${broker.kind} ${died} during the run`);
    const { peakRssMiB } = await broker.stop();
    file = {
      kind: 'ledgerline-bench-run',
      version: 1,
      id: runId('smoke', workload.name, date),
      date: date.toISOString(),
      command: `npm run bench -- smoke ${args.join(' ')}`.trim(),
      host: hostInfo(),
      workload,
      run: {
        target: { kind: broker.kind, label: broker.label, bootstrap: broker.bootstrap, peakRssMiB, startupMs: broker.startupMs },
        rate,
        topicSetupSeconds: r.topicSetupSeconds,
        result: r.result,
      },
    };
  } catch (e) {
    await broker.stop().catch(() => undefined);
    throw e;
  }
  console.log(runMarkdown(file));
  if (!values['no-write']) writeResults(file);

  const failures = checks(file);
  if (failures.length > 0) {
    console.error(`smoke FAILED against ${broker.kind}:\n  - ${failures.join('\n  - ')}`);
    process.exitCode = 1;
  } else {
    console.error(`smoke passed against ${broker.kind}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}`);
  }
}

/** What a working harness and broker must show; each failure is one line. */
export function checks(f: RunFile): string[] {
  const r = f.run.result;
  const out: string[] = [];
  if (r.produced.records === 0) out.push('no record was acknowledged');
  if (f.run.rate !== null && r.produceRate.recordsPerSec < f.run.rate / 2) {
    out.push(`produced ${Math.round(r.produceRate.recordsPerSec)} msg/s, under half the target ${Math.round(f.run.rate)} msg/s`);
  }
  if (f.workload.consumers > 0) {
    if (r.unconsumedRecords > 0) out.push(`${r.unconsumedRecords} records produced were never consumed`);
    if (r.consumed.records < r.produced.records) out.push(`consumed ${r.consumed.records} of the ${r.produced.records} records produced in the window`);
    if (r.endToEndLatency.count === 0) out.push('no end-to-end latency sample');
  }
  if (r.produceLatency.count === 0 && f.workload.acks !== 0) out.push('no produce latency sample');
  const errors = Object.entries(r.errors);
  if (errors.length > 0) out.push(`errors: ${errors.map(([k, v]) => `${k} ×${v}`).join(', ')}`);
  return out;
}
