import { describe, expect, it } from 'vitest';
import type { LoadResult } from '../../../../bench/lib/load.js';
import type { CompareFile, RunFile, RunRecord } from '../../../../bench/lib/report.js';
import { chartFor, compareMarkdown, hostInfo, mediansOf, pairRatios, securityRatios } from '../../../../bench/lib/report.js';
import { latencyHistogram, median, recordMs, summarize } from '../../../../bench/lib/stats.js';
import { ninesX, niceCeil, renderChart } from '../../../../bench/lib/svg.js';
import { parseWorkload } from '../../../../bench/lib/workload.js';
import { checks } from '../../../../bench/smoke.js';

function result(mibPerSec: number, p99: number, brokerCpuSeconds: number | null = null): LoadResult {
  const h = latencyHistogram();
  for (let i = 1; i <= 100; i++) recordMs(h, (i / 100) * p99);
  const lat = summarize(h);
  const records = Math.round(mibPerSec * 1024);
  return {
    seconds: 1,
    produced: { records, bytes: records * 1024, batches: records / 16, requests: 1 },
    consumed: { records, bytes: records * 1024, batches: records / 16, requests: 0 },
    produceRate: { recordsPerSec: records, mibPerSec },
    consumeRate: { recordsPerSec: records, mibPerSec },
    produceLatency: lat,
    endToEndLatency: lat,
    errors: {},
    clientCpuPercent: 10,
    brokerCpuSeconds,
    timeline: [],
    unconsumedRecords: 0,
    targetRecordsPerSec: null,
  };
}

function run(kind: 'ledgerline' | 'kafka', pair: number, mibPerSec: number, p99: number): RunRecord & { pair: number; order: number } {
  return { target: { kind, label: kind, bootstrap: 'h:1', peakRssMiB: 100 * pair, startupMs: 1 }, rate: null, topicSetupSeconds: 0, result: result(mibPerSec, p99), pair, order: pair };
}

/** A compare file of `runs` with the given medians and ratios, for compareMarkdown. */
function compareFile(o: Pick<CompareFile, 'runs' | 'medians' | 'ratios'> & Partial<CompareFile>): CompareFile {
  return { kind: 'ledgerline-bench-compare', version: 1, id: 'x', date: new Date(0).toISOString(), command: 'npm run bench -- compare w', host: hostInfo(), workload: parseWorkload({ name: 'w' }), unavailable: {}, failures: [], limits: null, ...o };
}

describe('benchmark statistics and reports', () => {
  it('summarizes latencies in ms from a µs histogram', () => {
    const h = latencyHistogram();
    for (let i = 1; i <= 1000; i++) recordMs(h, i / 10);
    const s = summarize(h);
    expect(s.count).toBe(1000);
    expect(s.p50).toBeCloseTo(50, 0);
    expect(s.p99).toBeCloseTo(99, 0);
    expect(s.max).toBeCloseTo(100, 0);
    expect(s.curve.at(-1)![0]).toBe(100);
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
  });

  it('takes medians per broker and ratios pair by pair', () => {
    const runs = [run('ledgerline', 1, 100, 10), run('kafka', 1, 50, 20), run('ledgerline', 2, 120, 12), run('kafka', 2, 60, 24), run('ledgerline', 3, 80, 8)];
    const m = mediansOf(runs.filter((r) => r.target.kind === 'ledgerline'));
    expect(m.runs).toBe(3);
    expect(m.produceMiBps).toBe(100);
    expect(m.peakRssMiB).toBe(200);
    expect(m.produceP99).toBeCloseTo(9.9, 1); // the median run's p99 of samples spread up to 10 ms
    const ratios = pairRatios(runs);
    expect(ratios.map((r) => r.pair)).toEqual([1, 2]);
    expect(ratios[0]!.produceThroughput).toBeCloseTo(2);
    expect(ratios[1]!.produceP99).toBeCloseTo(0.5, 2);
    const md = compareMarkdown(compareFile({ runs, medians: { ledgerline: m, kafka: mediansOf(runs.filter((r) => r.target.kind === 'kafka')) }, ratios }));
    expect(md).toContain('| ledgerline | 3 | 100 |');
    expect(md).toContain('| 1 | 2.00 | 2.00 | 0.500 | 0.500 | – |');
  });

  it('reports broker CPU seconds per GiB produced, its ratio, and the cluster setup in the title', () => {
    // 1 s windows: 128 MiB produced = 1/8 GiB.
    const withCpu = (kind: 'ledgerline' | 'kafka', pair: number, cpu: number | null): RunRecord & { pair: number; order: number } => ({
      ...run(kind, pair, 128, 10),
      result: result(128, 10, cpu),
    });
    const runs = [withCpu('ledgerline', 1, 0.5), withCpu('kafka', 1, 0.25), withCpu('ledgerline', 2, 1), withCpu('kafka', 2, null)];
    const l = mediansOf(runs.filter((r) => r.target.kind === 'ledgerline'));
    expect(l.brokerCpuSecondsPerGiB).toBeCloseTo(6); // median of 4 and 8 s/GiB
    const k = mediansOf(runs.filter((r) => r.target.kind === 'kafka'));
    expect(k.brokerCpuSecondsPerGiB).toBeCloseTo(2); // the run without a reading is left out
    expect(mediansOf([run('kafka', 1, 1, 1)]).brokerCpuSecondsPerGiB).toBeNull();
    const ratios = pairRatios(runs);
    expect(ratios[0]!.brokerCpuPerGiB).toBeCloseTo(2);
    expect(ratios[1]!.brokerCpuPerGiB).toBeUndefined();
    const md = compareMarkdown(compareFile({ runs, medians: { 'ledgerline-cluster': l, 'kafka-cluster': k }, ratios, cluster: true, command: 'npm run bench -- compare w --cluster' }));
    expect(md).toContain('### w: 3 Ledgerline brokers on 3 BookKeeper bookies vs 3 Apache Kafka nodes');
    expect(md).toMatch(/\| ledgerline-cluster \| 2 \| 128 \|[^\n]*\| 6\.00 \| – \| 10\.0% \/ – \/ – \|/);
    expect(md).toContain('| 1 | 1.00 | 1.00 | 1.00 | 1.00 | 2.00 |');
    expect(md).toContain('| 2 | 1.00 | 1.00 | 1.00 | 1.00 | – |');
  });

  it("reports a catch-up run's broker CPU per GiB read apart from the backlog write's, and its ratio", () => {
    // The backlog write: 128 MiB in 1 s (1/8 GiB); the read: 256 MiB in 1 s (1/4 GiB).
    const catchUp = (kind: 'ledgerline' | 'kafka', pair: number, writeCpu: number, readCpu: number | null): RunRecord & { pair: number; order: number } => ({
      ...run(kind, pair, 256, 10),
      backlogWrite: result(128, 10, writeCpu),
      result: result(256, 10, readCpu),
    });
    const runs = [catchUp('ledgerline', 1, 0.5, 1), catchUp('kafka', 1, 0.25, 0.25), catchUp('ledgerline', 2, 1, 2), catchUp('kafka', 2, 0.5, null)];
    const l = mediansOf(runs.filter((r) => r.target.kind === 'ledgerline'));
    expect(l.brokerCpuSecondsPerGiB).toBeCloseTo(6); // the write: median of 4 and 8 s/GiB
    expect(l.readCpuSecondsPerGiB).toBeCloseTo(6); // the read: median of 4 and 8 s/GiB
    const k = mediansOf(runs.filter((r) => r.target.kind === 'kafka'));
    expect(k.readCpuSecondsPerGiB).toBeCloseTo(1); // the run without a reading is left out
    expect(mediansOf([run('kafka', 1, 1, 1)]).readCpuSecondsPerGiB).toBeUndefined(); // a live run has no read phase
    const ratios = pairRatios(runs);
    expect(ratios[0]!.readCpuPerGiB).toBeCloseTo(4);
    expect(ratios[1]!.readCpuPerGiB).toBeUndefined();
    const md = compareMarkdown(compareFile({ runs, medians: { ledgerline: l, kafka: k }, ratios, workload: parseWorkload({ name: 'w', backlogBytes: 2 ** 30 }) }));
    expect(md).toContain('Broker CPU while reading, s per GiB read: ledgerline 6.00, kafka 1.00.');
    expect(md).toContain('| pair | produce MiB/s | consume MiB/s | produce p99 | e2e p99 | broker CPU s/GiB | read CPU s/GiB |');
    expect(md).toContain('| 1 | 1.00 | 1.00 | 1.00 | 1.00 | 2.00 | 4.00 |');
    expect(md).toContain('| 2 | 1.00 | 1.00 | 1.00 | 1.00 | 2.00 | – |');
  });

  it("shows the disk's sequential read with the page cache dropped beside the other limits, when it was measured", () => {
    const runs = [run('ledgerline', 1, 500, 10), run('kafka', 1, 400, 10)];
    const medians = { ledgerline: mediansOf([runs[0]!]), kafka: mediansOf([runs[1]!]) };
    const disk = {
      dir: '/d',
      chunkBytes: 1000,
      syncEachChunk: { bytes: 2 ** 30, seconds: 4, mibPerSec: 256, fsyncP50Ms: 0.5, fsyncP99Ms: 1 },
      syncAtEnd: { bytes: 2 ** 31, seconds: 2, mibPerSec: 1024 },
    };
    const loopback = { connections: 4, chunkBytes: 1000, seconds: 1, bytes: 2 ** 30, mibPerSec: 1024 };
    const base = { runs, medians, ratios: pairRatios(runs), workload: parseWorkload({ name: 'w', backlogBytes: 2 ** 31 }) };
    const measured = compareMarkdown(compareFile({ ...base, limits: { loopback, disk: { ...disk, coldRead: { bytes: 2 ** 31, seconds: 4, mibPerSec: 512, readBytes: 2 ** 20 } } } }));
    expect(measured).toContain('| disk: write, one fsync at the end | 1024 | 2048 MiB in /d |');
    expect(measured).toContain('| disk: sequential read, page cache dropped | 512 | the same 2048 MiB, 1 MiB reads, one in flight |');
    expect(compareMarkdown(compareFile({ ...base, limits: { loopback, disk } }))).not.toContain('page cache dropped');
    // The O_DIRECT write limit, where the file system took it.
    const direct = { bytes: 2 ** 31, seconds: 4, mibPerSec: 512, fsyncP50Ms: 0.25, fsyncP99Ms: 2 };
    expect(compareMarkdown(compareFile({ ...base, limits: { loopback, disk: { ...disk, directSyncEachChunk: direct } } }))).toContain(
      '| disk: O_DIRECT write + fsync per request | 512 | as above, bypassing the page cache (the local store\'s default), fsync p50 0.250 ms, p99 2.00 ms |',
    );
    expect(compareMarkdown(compareFile({ ...base, limits: { loopback, disk } }))).not.toContain('O_DIRECT');
  });

  it("reports the broker's and the load generator's GC pauses in % of the produce window, left out where not measured", () => {
    const withGc = (kind: 'ledgerline' | 'kafka', pair: number, broker: number | null, client: number): RunRecord & { pair: number; order: number } => {
      const r = run(kind, pair, 128, 10);
      return { ...r, result: { ...result(128, 10), seconds: 4, brokerGcSeconds: broker, clientGcSeconds: client } };
    };
    const runs = [withGc('ledgerline', 1, 0.2, 0.04), withGc('kafka', 1, 0.08, 0.04), withGc('ledgerline', 2, 0.4, 0.08), withGc('kafka', 2, null, 0.08)];
    const l = mediansOf(runs.filter((r) => r.target.kind === 'ledgerline'));
    expect(l.brokerGcPercent).toBeCloseTo(7.5); // 5% and 10% of 4 s windows
    expect(l.clientGcPercent).toBeCloseTo(1.5);
    const k = mediansOf(runs.filter((r) => r.target.kind === 'kafka'));
    expect(k.brokerGcPercent).toBeCloseTo(2); // the run without a reading is left out
    expect(mediansOf([run('kafka', 1, 1, 1)]).brokerGcPercent).toBeNull();
    const md = compareMarkdown(compareFile({ runs, medians: { ledgerline: l, kafka: k }, ratios: pairRatios(runs) }));
    expect(md).toMatch(/\| ledgerline \| 2 \| 128 \|[^\n]*\| 7\.50% \| 10\.0% \/ 1\.50% \/ – \|/);
  });

  it("reports how late the load generator's event loop ran, the median of the runs' p99s, – where not measured", () => {
    const withLoop = (kind: 'ledgerline' | 'kafka', pair: number, loop: number | null): RunRecord & { pair: number; order: number } => {
      const r = run(kind, pair, 128, 10);
      return { ...r, result: { ...result(128, 10), clientLoopDelayP99Ms: loop } };
    };
    const runs = [withLoop('ledgerline', 1, 2), withLoop('kafka', 1, null), withLoop('ledgerline', 2, 4), withLoop('kafka', 2, null)];
    const l = mediansOf(runs.filter((r) => r.target.kind === 'ledgerline'));
    expect(l.clientLoopDelayP99Ms).toBeCloseTo(3);
    expect(mediansOf(runs.filter((r) => r.target.kind === 'kafka')).clientLoopDelayP99Ms).toBeNull();
    const md = compareMarkdown(compareFile({ runs, medians: { ledgerline: l, kafka: mediansOf(runs.filter((r) => r.target.kind === 'kafka')) }, ratios: pairRatios(runs) }));
    expect(md).toMatch(/\| ledgerline \| 2 \| 128 \|[^\n]*\/ 3\.00 ms \|/);
    expect(md).toMatch(/\| kafka \| 2 \| 128 \|[^\n]*\/ – \|/);
  });

  it('reports transactions/s with its spread, commit latency and their ratios for a transactional workload', () => {
    const txn = (r: RunRecord & { pair: number; order: number }, perSec: number, commitMs: number): typeof r => {
      const h = latencyHistogram();
      for (let i = 1; i <= 100; i++) recordMs(h, (i / 100) * commitMs);
      r.result.transactions = { committed: perSec, perSec, commitLatency: summarize(h), concurrentRetries: 0 };
      return r;
    };
    const runs = [txn(run('ledgerline', 1, 10, 5), 40, 100), txn(run('kafka', 1, 20, 5), 80, 50), txn(run('ledgerline', 2, 10, 5), 60, 100), txn(run('kafka', 2, 20, 5), 80, 50)];
    const medians = { ledgerline: mediansOf(runs.filter((r) => r.target.kind === 'ledgerline')), kafka: mediansOf(runs.filter((r) => r.target.kind === 'kafka')) };
    expect(medians.ledgerline.transactions).toMatchObject({ perSec: 50, perSecMin: 40, perSecMax: 60 });
    const ratios = pairRatios(runs);
    expect(ratios[0]!.transactionsPerSec).toBeCloseTo(0.5);
    expect(ratios[0]!.commitP99).toBeCloseTo(2, 1);
    const md = compareMarkdown(compareFile({ runs, medians, ratios, command: 'npm run bench -- compare t', workload: parseWorkload({ name: 't', transactionRecords: 16 }) }));
    expect(md).toContain('16 records per transaction');
    expect(md).toContain('| ledgerline | 2 | 50.0 (40.0–60.0) |');
    expect(md).toContain('| pair | produce MiB/s | consume MiB/s | produce p99 | e2e p99 | broker CPU s/GiB | transactions/s | commit p99 |');
    expect(md).toMatch(/\| 1 \| 0\.500 \| 0\.500 \| 1\.00 \| 1\.00 \| – \| 0\.500 \| 2\.0\d \|/);
  });

  it('compares each broker on PLAINTEXT and SASL_SSL: ratios per broker and per protocol, every run in order', () => {
    const secure = (kind: 'ledgerline' | 'kafka', pair: number, order: number, protocol: 'PLAINTEXT' | 'SASL_SSL', mibPerSec: number, p99: number) => ({
      ...run(kind, pair, mibPerSec, p99),
      order,
      protocol,
    });
    // Pair 1 runs PLAINTEXT first, pair 2 SASL_SSL first.
    const runs = [
      secure('ledgerline', 1, 1, 'PLAINTEXT', 100, 10),
      secure('kafka', 1, 2, 'PLAINTEXT', 200, 10),
      secure('ledgerline', 1, 3, 'SASL_SSL', 80, 20),
      secure('kafka', 1, 4, 'SASL_SSL', 100, 40),
      secure('ledgerline', 2, 5, 'SASL_SSL', 60, 20),
      secure('kafka', 2, 6, 'SASL_SSL', 120, 40),
      secure('ledgerline', 2, 7, 'PLAINTEXT', 100, 10),
      secure('kafka', 2, 8, 'PLAINTEXT', 200, 10),
    ];
    const { brokerRatios, protocolRatios } = securityRatios(runs, 'SASL_SSL');
    expect(protocolRatios.ledgerline!.map((r) => r.produceThroughput)).toEqual([0.8, 0.6]);
    expect(protocolRatios.kafka!.map((r) => r.produceThroughput)).toEqual([0.5, 0.6]);
    expect(protocolRatios.kafka![0]!.produceP99).toBeCloseTo(4, 1);
    expect(brokerRatios.PLAINTEXT!.map((r) => r.produceThroughput)).toEqual([0.5, 0.5]);
    expect(brokerRatios.SASL_SSL!.map((r) => r.produceThroughput)).toEqual([0.8, 0.5]);
    const medians: Record<string, ReturnType<typeof mediansOf>> = {};
    for (const kind of ['ledgerline', 'kafka']) {
      for (const protocol of ['PLAINTEXT', 'SASL_SSL']) medians[`${kind} ${protocol}`] = mediansOf(runs.filter((r) => r.target.kind === kind && r.protocol === protocol));
    }
    const tls = { ledgerline: { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' }, kafka: { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' } };
    const f = compareFile({ runs, medians, ratios: [], security: { protocol: 'SASL_SSL', mechanism: 'SCRAM-SHA-512', tls, brokerRatios, protocolRatios } });
    const md = compareMarkdown(f);
    expect(md).toContain('### w: Ledgerline vs Apache Kafka, PLAINTEXT and SASL_SSL (SCRAM-SHA-512)');
    expect(md).toContain('| ledgerline SASL_SSL | 2 | 70.0 |');
    expect(md).toContain('ledgerline TLSv1.3 TLS_AES_256_GCM_SHA384; kafka TLSv1.3 TLS_AES_256_GCM_SHA384');
    expect(md).toContain('| ledgerline | 1 | 0.800 | 0.800 |');
    expect(md).toContain('| ledgerline | **median** | 0.700 | 0.700 |');
    expect(md).toContain('| kafka | **median** | 0.550 | 0.550 |');
    expect(md).toContain('| SASL_SSL | **median** | 0.650 | 0.650 |');
    expect(md).toContain('| 5 | 2 | ledgerline | SASL_SSL | 60.0 | 60.0 |');
    // No Ledgerline ÷ Kafka table of all runs mixed: it is per protocol.
    expect(md).not.toContain('Ledgerline ÷ Kafka, pair by pair (throughput');
    const svg = chartFor(f);
    expect(svg).toContain('kafka SASL_SSL produce');
    expect(svg).toContain('PLAINTEXT and SASL_SSL');
  });

  it('draws a well-formed SVG with one bar per figure and one path per curve', () => {
    const svg = renderChart({
      title: 'a <b> & c',
      bars: [
        { label: 'x', value: 3, color: '#000' },
        { label: 'limit', value: 7, color: '#999', limit: true },
      ],
      barUnit: 'MiB/s',
      curves: [{ label: 'c', points: [[50, 1], [99, 10], [100, 20]], color: '#f00' }],
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('a &lt;b&gt; &amp; c');
    expect(svg.match(/<rect /g)).toHaveLength(3); // background + 2 bars
    expect(svg.match(/<path /g)).toHaveLength(1);
    expect(niceCeil(3.2)).toBe(5);
    expect(niceCeil(70)).toBe(100);
    expect(ninesX(99, 4)).toBeCloseTo(2);
    expect(ninesX(100, 4)).toBe(4.5);
  });

  it('makes a chart from a single run file', () => {
    const file: RunFile = {
      kind: 'ledgerline-bench-run',
      version: 1,
      id: 'x',
      date: new Date(0).toISOString(),
      command: 'c',
      host: hostInfo(),
      workload: parseWorkload({ name: 'w' }),
      run: run('kafka', 1, 50, 20),
    };
    expect(chartFor(file)).toContain('kafka produce');
    expect(checks(file)).toEqual([]);
    file.run.result.unconsumedRecords = 5;
    file.run.result.errors = { NOT_LEADER_OR_FOLLOWER: 2 };
    expect(checks(file)).toEqual(['5 records produced were never consumed', 'errors: NOT_LEADER_OR_FOLLOWER ×2']);
  });
});
