/**
 * `npm run bench -- run <workload> --bootstrap host:port [options]`: runs one workload against any
 * Kafka-protocol bootstrap server (the harness starts nothing) and writes bench/results/<id>.{json,md,svg}.
 */
import { peakRssMiB } from '../compat/lib/proc.js';
import type { ExecuteResult } from './lib/execute.js';
import { executeWorkload } from './lib/execute.js';
import { WORKLOAD_HELP, calibrate, logger, parse, workloadFromArgs } from './lib/cli.js';
import type { RunFile } from './lib/report.js';
import { hostInfo, runId, runMarkdown, writeResults } from './lib/report.js';
import { TransactionError } from './lib/transactions.js';
import { workloadNames } from './lib/workload.js';

const HELP = `Usage: npm run bench -- run <workload> --bootstrap host:port [options]

Workloads: ${workloadNames().join(', ')}

  --bootstrap H:P     Kafka-protocol bootstrap server (required)
  --max-rate N        max rate (msg/s) a percent rate refers to; measured first when absent
  --broker-pid PID    read the broker's peak RSS from /proc/PID/status at the end
  --label NAME        name of the target in reports (default: external)
  --keep-topics       do not delete the benchmark topics
  --no-write          print the summary only
${WORKLOAD_HELP}`;

export default async function run(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    bootstrap: { type: 'string' },
    'max-rate': { type: 'string' },
    'broker-pid': { type: 'string' },
    label: { type: 'string' },
    'keep-topics': { type: 'boolean' },
    'no-write': { type: 'boolean' },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const bootstrap = values.bootstrap;
  if (!bootstrap) throw new Error(`--bootstrap is required\n\n${HELP}`);
  const workload = workloadFromArgs(positionals[0], values);
  const log = logger();
  const date = new Date();

  let rate: number | null = null;
  let calibration: RunFile['calibration'];
  if (workload.rate.kind === 'fixed') rate = workload.rate.messagesPerSecond;
  if (workload.rate.kind === 'percent') {
    const given = values['max-rate'] !== undefined ? Number(values['max-rate']) : undefined;
    const max = given ?? (await calibrate(workload, bootstrap, log));
    rate = (max * workload.rate.percent) / 100;
    calibration = { workload: workload.rate.reference, maxRecordsPerSec: max, source: given !== undefined ? '--max-rate' : 'measured before the run' };
  }
  log(`running ${workload.name} against ${bootstrap}${rate !== null ? ` at ${Math.round(rate)} msg/s` : ''}`);
  let r: ExecuteResult;
  try {
    r = await executeWorkload({ bootstrap, workload, rate, log, keepTopics: values['keep-topics'] });
  } catch (e) {
    // A broker that refuses the transaction protocol: one line naming its answer, not a stack.
    if (!(e instanceof TransactionError)) throw e;
    console.error(`run: ${workload.name} against ${bootstrap} failed: ${e.message}`);
    process.exitCode = 1;
    return;
  }
  const pid = values['broker-pid'] !== undefined ? Number(values['broker-pid']) : undefined;
  const file: RunFile = {
    kind: 'ledgerline-bench-run',
    version: 1,
    id: runId('run', workload.name, date),
    date: date.toISOString(),
    command: `npm run bench -- run ${args.join(' ')}`,
    host: hostInfo(),
    workload,
    calibration,
    run: {
      target: { kind: 'external', label: values.label ?? 'external', bootstrap, peakRssMiB: await peakRssMiB(pid), startupMs: null },
      rate,
      topicSetupSeconds: r.topicSetupSeconds,
      result: r.result,
      backlogWrite: r.backlogWrite,
    },
  };
  console.log(runMarkdown(file));
  if (!values['no-write']) {
    const paths = writeResults(file);
    log(`wrote ${paths.json}, ${paths.md}, ${paths.svg}`);
  }
}
