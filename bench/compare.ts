/**
 * `npm run bench -- compare <workload> [options]`: the workload against Ledgerline and against a real
 * Apache Kafka 4.4.0, both started by the harness on this machine with their data on the same disk, in
 * alternating runs (Ledgerline, Kafka, Ledgerline, Kafka, ...; a fresh broker for each run). Reports the
 * medians per broker, the Ledgerline ÷ Kafka ratios pair by pair, and the machine's limits measured in
 * the same run (loopback TCP to a trivial sink; sequential write + fsync of the workload's bytes).
 *
 * A broker that cannot start is reported with the reason, and the other still runs; a run that fails
 * (the broker dies, a request times out for good) is reported and the next one goes on.
 *
 * `--security SASL_SSL` runs every pair on PLAINTEXT and on SASL_SSL with SCRAM-SHA-512 (lib/security.ts): pair
 * p runs Ledgerline, Kafka on one protocol, then Ledgerline, Kafka on the other, the protocol order swapping
 * from pair to pair (PLAINTEXT first in odd pairs), so drift on a shared machine does not favour one protocol.
 * It reports medians per broker and protocol, SASL_SSL ÷ PLAINTEXT per broker and Ledgerline ÷ Kafka per
 * protocol, pair by pair, and the loopback limit over TLS beside the others.
 */
import { executeWorkload } from './lib/execute.js';
import { buildTemplate } from './lib/batches.js';
import type { StartedBroker, BrokerKind } from './lib/brokers.js';
import { dataRoot, startBroker } from './lib/brokers.js';
import { WORKLOAD_HELP, calibrate, logger, parse, workloadFromArgs } from './lib/cli.js';
import type { MachineLimits } from './lib/limits.js';
import { measureDisk, measureLoopback } from './lib/limits.js';
import { pageCacheDropUnavailable } from './lib/page-cache.js';
import type { CompareFile, RunRecord } from './lib/report.js';
import { compareMarkdown, hostInfo, mediansOf, pairRatios, protocolOf, runId, securityRatios, writeResults } from './lib/report.js';
import type { BenchProtocol, BenchSecurity } from './lib/security.js';
import { SECURITY_PROTOCOLS, prepareSecurity } from './lib/security.js';
import type { Workload } from './lib/workload.js';
import { recordsPerBatch, workloadNames } from './lib/workload.js';

const HELP = `Usage: npm run bench -- compare <workload> [options]

Workloads: ${workloadNames().join(', ')}

  --pairs N           Ledgerline/Kafka run pairs, alternating (default 2)
  --cluster           three of each: Ledgerline brokers on ZooKeeper and 3 BookKeeper bookies against
                      3 Kafka KRaft nodes, replication factor 3, min.insync.replicas 2
  --only B            ledgerline or kafka: run one broker only (still alternating with nothing)
  --security P        P = SASL_SSL: every pair also over a SASL_SSL listener (TLS with a CA made at start,
                      a SCRAM-SHA-512 user made with AlterUserScramCredentials); ratios SASL_SSL ÷ PLAINTEXT
                      per broker and Ledgerline ÷ Kafka per protocol. Not with --cluster
  --kafka-heap MiB    Kafka heap (default 1024, as kafka-server-start.sh)
  --disk-read-limit   the limits add the disk's sequential read with the page cache dropped (sync, then
                      /proc/sys/vm/drop_caches: Linux, as root): the ceiling of a catch-up read of a backlog
                      larger than the page cache (--backlog above the machine's memory)
  --no-limits         skip the loopback and disk measurements
  --limits-seconds S  seconds per limit measurement (default 5)
  --no-write          print the summary only
${WORKLOAD_HELP}`;

export default async function compare(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    pairs: { type: 'string' },
    cluster: { type: 'boolean' },
    only: { type: 'string' },
    security: { type: 'string' },
    'kafka-heap': { type: 'string' },
    'disk-read-limit': { type: 'boolean' },
    'no-limits': { type: 'boolean' },
    'limits-seconds': { type: 'string' },
    'no-write': { type: 'boolean' },
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const workload = workloadFromArgs(positionals[0], values);
  const pairs = Number(values.pairs ?? 2);
  if (!Number.isInteger(pairs) || pairs < 1) throw new Error('--pairs must be a positive integer');
  const kinds: BrokerKind[] = values.only === undefined ? ['ledgerline', 'kafka'] : [values.only as BrokerKind];
  if (!kinds.every((k) => k === 'ledgerline' || k === 'kafka')) throw new Error('--only takes ledgerline or kafka');
  const kafkaHeapMiB = Number(values['kafka-heap'] ?? 1024);
  const cluster = values.cluster === true;
  if (values.security !== undefined && values.security !== 'SASL_SSL') throw new Error('--security takes SASL_SSL');
  if (values.security !== undefined && cluster) throw new Error('--security runs one node of each, not with --cluster');
  const diskReadLimit = values['disk-read-limit'] === true;
  if (diskReadLimit) {
    if (values['no-limits']) throw new Error('--disk-read-limit is one of the limits: not with --no-limits');
    const why = await pageCacheDropUnavailable();
    if (why) throw new Error(`--disk-read-limit: ${why}`);
  }
  const log = logger();
  const date = new Date();
  const unavailable: Record<string, string> = {};
  // The CA, the brokers' certificate and the user, made once for the whole comparison in its temp directory.
  const security: BenchSecurity | undefined = values.security === undefined ? undefined : prepareSecurity(dataRoot());
  const protocols: readonly BenchProtocol[] = security ? SECURITY_PROTOCOLS : ['PLAINTEXT'];
  const tls: NonNullable<CompareFile['security']>['tls'] = {};

  const start = async (kind: BrokerKind): Promise<StartedBroker | null> => {
    if (unavailable[kind]) return null;
    const b = await startBroker(kind, { kafkaHeapMiB, log, cluster, security });
    if ('error' in b) {
      unavailable[kind] = b.error;
      log(`${kind} unavailable: ${b.error}`);
      return null;
    }
    if (b.secure) tls[kind] ??= b.secure.tls;
    return b;
  };
  /** Where the load generator connects on `protocol`, and how. */
  const target = (b: StartedBroker, protocol: BenchProtocol) =>
    protocol === 'PLAINTEXT' ? { bootstrap: b.bootstrap, security: undefined } : { bootstrap: b.secure!.bootstrap, security: security!.client };

  // A percent rate is resolved once, to the same absolute rate for both brokers: that percentage of
  // the lower of their max rates, so neither is driven past what it sustains. With --security the max rates
  // are measured on the secure listener, the slower one, so that every run can carry the rate.
  let rate: number | null = workload.rate.kind === 'fixed' ? workload.rate.messagesPerSecond : null;
  let calibration: CompareFile['calibration'];
  if (workload.rate.kind === 'percent') {
    const maxRecordsPerSec: Record<string, number> = {};
    for (const kind of kinds) {
      const b = await start(kind);
      if (!b) continue;
      try {
        const t = target(b, protocols.at(-1)!);
        maxRecordsPerSec[kind] = await calibrate(workload, t.bootstrap, (l) => log(`[${kind}] ${l}`), t.security);
      } finally {
        await b.stop();
      }
    }
    const maxes = Object.values(maxRecordsPerSec);
    if (maxes.length === 0) throw new Error(`no broker could run: ${JSON.stringify(unavailable)}`);
    rate = (Math.min(...maxes) * workload.rate.percent) / 100;
    calibration = { workload: workload.rate.reference, maxRecordsPerSec, rate };
    log(`rate for both brokers: ${Math.round(rate)} msg/s`);
  }

  const limits = values['no-limits'] ? null : await measureLimits(workload, Number(values['limits-seconds'] ?? 5), log, security, diskReadLimit);

  const runs: CompareFile['runs'] = [];
  const failures: CompareFile['failures'] = [];
  let order = 0;
  for (let pair = 1; pair <= pairs; pair++) {
    for (const protocol of pair % 2 === 1 ? protocols : [...protocols].reverse()) {
      for (const kind of kinds) {
        const b = await start(kind);
        if (!b) continue;
        order++;
        const label = security ? `${kind} ${protocol}` : kind;
        log(`run ${order} (pair ${pair}): ${workload.name} on ${label}`);
        let record: RunRecord;
        try {
          const t = target(b, protocol);
          const r = await executeWorkload({ ...t, workload, rate, log: (l) => log(`[${label}] ${l}`), brokerCpuSeconds: () => b.cpuSeconds(), brokerGcSeconds: () => b.gcSeconds() });
          const died = b.exited();
          if (died) throw new Error(`${kind} ${died} during the run`);
          const { peakRssMiB } = await b.stop();
          record = {
            target: { kind, label: b.label, bootstrap: t.bootstrap, peakRssMiB, startupMs: b.startupMs },
            rate,
            topicSetupSeconds: r.topicSetupSeconds,
            result: r.result,
            backlogWrite: r.backlogWrite,
            ...(security ? { protocol } : {}),
          };
        } catch (e) {
          // A failed run is reported, not hidden; the other runs go on.
          const died = b.exited();
          await b.stop().catch(() => undefined);
          const why = `${(e as Error).message}${died && !(e as Error).message.includes(died) ? ` (${died})` : ''}`;
          failures.push({ order, pair, kind: label, error: why });
          log(`[${label}] run ${order} failed: ${why}`);
          continue;
        }
        runs.push({ ...record, order, pair });
        const produced = record.backlogWrite ?? record.result;
        const e2e = record.result.endToEndLatency;
        const txn = record.result.transactions;
        log(
          `[${label}] produce ${produced.produceRate.mibPerSec.toFixed(1)} MiB/s (p99 ${produced.produceLatency.p99.toFixed(2)} ms), ` +
            `consume ${record.result.consumeRate.mibPerSec.toFixed(1)} MiB/s${e2e.count > 0 ? ` (e2e p99 ${e2e.p99.toFixed(2)} ms)` : ''}, peak RSS ${record.target.peakRssMiB ?? '?'} MiB` +
            (txn ? `, ${txn.perSec.toFixed(1)} transactions/s (commit p99 ${txn.commitLatency.p99.toFixed(2)} ms)` : ''),
        );
      }
    }
  }
  security?.cleanup();
  if (runs.length === 0) {
    // Every run failed or no broker started: one line with each reason, not a stack.
    const reasons = [...Object.entries(unavailable).map(([k, v]) => `${k}: ${v}`), ...failures.map((f) => `${f.kind} run ${f.order}: ${f.error}`)];
    console.error(`compare: no run completed (${reasons.join('; ')})`);
    process.exitCode = 1;
    return;
  }

  const medians: CompareFile['medians'] = {};
  for (const kind of kinds) {
    for (const protocol of protocols) {
      const mine = runs.filter((r) => r.target.kind === kind && protocolOf(r) === protocol);
      if (mine.length > 0) medians[security ? `${kind} ${protocol}` : kind] = mediansOf(mine);
    }
  }
  const file: CompareFile = {
    kind: 'ledgerline-bench-compare',
    version: 1,
    id: runId('compare', workload.name, date),
    date: date.toISOString(),
    command: `npm run bench -- compare ${args.join(' ')}`,
    host: hostInfo(),
    cluster,
    workload,
    calibration,
    runs,
    unavailable,
    failures,
    medians,
    ratios: security ? [] : pairRatios(runs),
    limits,
    ...(security ? { security: { protocol: security.protocol, mechanism: security.mechanism, tls, ...securityRatios(runs, security.protocol) } } : {}),
  };
  console.log(compareMarkdown(file));
  if (!values['no-write']) {
    const paths = writeResults(file);
    log(`wrote ${paths.json}, ${paths.md}, ${paths.svg}`);
  }
}

async function measureLimits(w: Workload, seconds: number, log: (l: string) => void, security: BenchSecurity | undefined, diskRead: boolean): Promise<MachineLimits> {
  const template = await buildTemplate(w);
  const requestBytes = template.bytes.length * Math.min(w.partitionsPerRequest, w.topics * w.partitionsPerTopic);
  log(`machine limits: loopback TCP (${Math.max(1, w.producers)} connections, ${requestBytes} B writes), ${seconds} s`);
  const loopback = await measureLoopback({ connections: Math.max(1, w.producers), chunkBytes: requestBytes, durationMs: seconds * 1000 });
  let loopbackTls: MachineLimits['loopbackTls'];
  if (security) {
    loopbackTls = await measureLoopback({ connections: Math.max(1, w.producers), chunkBytes: requestBytes, durationMs: seconds * 1000, tls: security.sink });
    log(`loopback over TLS ${loopbackTls.mibPerSec.toFixed(0)} MiB/s (${loopbackTls.tls.protocol} ${loopbackTls.tls.cipher})`);
  }
  log(`loopback ${loopback.mibPerSec.toFixed(0)} MiB/s; disk: write + fsync of ${requestBytes} B chunks in ${dataRoot()}, ${seconds} s each`);
  const disk = await measureDisk({ dir: dataRoot(), sample: template.bytes, chunkBytes: requestBytes, maxBytes: 2 * 2 ** 30, durationMs: seconds * 1000, coldRead: diskRead });
  log(
    `disk ${disk.syncEachChunk.mibPerSec.toFixed(0)} MiB/s with fsync per request` +
      `${disk.directSyncEachChunk ? ` (${disk.directSyncEachChunk.mibPerSec.toFixed(0)} with O_DIRECT)` : ''}, ${disk.syncAtEnd.mibPerSec.toFixed(0)} MiB/s with one fsync` +
      `${disk.coldRead ? `, ${disk.coldRead.mibPerSec.toFixed(0)} MiB/s read back cold` : ''}; ${recordsPerBatch(w)} records per batch`,
  );
  return { loopback, ...(loopbackTls ? { loopbackTls } : {}), disk };
}
