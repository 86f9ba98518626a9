/**
 * The `ledgerline` command and the broker process's life: version and usage errors, configuration errors
 * reported before anything starts, the data directory from LEDGERLINE_LOG_DIRS, one broker per data
 * directory, and a graceful SIGTERM that does not wait for parked long polls and keeps the data.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { ProduceApi, type ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch, buildRecordBatchSync } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { readPartition } from '../support/records.js';
import { fetchRequest, produceRequest } from '../support/requests.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ledgerline ${args.join(' ')} did not exit within 20 s`));
    }, 20_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.sequential('the ledgerline command and process', () => {
  let broker: BrokerProcess;
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerline-lifecycle-'));

  beforeAll(async () => {
    broker = await BrokerProcess.start({ dataDir, dataDirFromEnv: true });
  });

  afterAll(async () => {
    await broker?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints its version and refuses unknown commands and options', async () => {
    const [version, unknown, option] = await Promise.all([cli(['version']), cli(['frobnicate']), cli(['start', '--bogus'])]);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^ledgerline \d+\.\d+\.\d+/);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown command "frobnicate"/);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/unknown option "--bogus"/);
  });

  it('reports configuration errors and exits 2 without starting', async () => {
    const [bad, noValue, env] = await Promise.all([
      cli(['start', '--set', 'log.dirs=/nonexistent/never-created', '--set', 'num.partitions=zero']),
      cli(['start', '--set', 'num.partitions']),
      cli(['start', '--set', 'log.dirs=/nonexistent/never-created'], { LEDGERLINE_AUTO_CREATE_TOPICS_ENABLE: 'maybe' }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/Invalid value zero for configuration num.partitions/);
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toMatch(/--set needs key=value/);
    expect(env.code).toBe(2);
    expect(env.stderr).toMatch(/auto.create.topics.enable/);
  });

  it('keeps its data in the directory LEDGERLINE_LOG_DIRS names', async () => {
    const line = broker.logs.find((l) => l.includes('"Ledgerline started"'))!;
    expect((JSON.parse(line) as { dataDir: string }).dataDir).toBe(dataDir);
    expect(readdirSync(dataDir).sort()).toEqual(['ledgers', 'metadata']);
  });

  it('refuses to start a second broker on a data directory in use', async () => {
    await expect(BrokerProcess.start({ dataDir: broker.dataDir, startTimeoutMs: 20_000 })).rejects.toThrow(/exited during start \(code 1/);
    expect(broker.running).toBe(true);
  });

  it('answers every request it read before a SIGTERM, and appends nothing it did not answer', async () => {
    const admin = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    const [created] = await admin.createTopics([{ name: 'drained', numPartitions: 1 }]);
    expect(created!.errorCode).toBe(0);
    await admin.close();

    const c = await RawConnection.connect(broker.port);
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push(c.send(ProduceApi, 9, produceRequest([{ topic: 'drained', partition: 0, records: buildRecordBatchSync([{ value: `req-${i}` }]) }])));
    const stopped = broker.kill('SIGTERM');
    const answered = new Map<string, bigint>();
    for (const id of ids) {
      let res: ProduceResponse;
      try {
        res = await c.receive(ProduceApi, 9, id, 15_000);
      } catch {
        break; // closed: the rest was not read
      }
      const p = res.responses[0]!.partitionResponses[0]!;
      expect(p.errorCode).toBe(0);
      answered.set(`req-${ids.indexOf(id)}`, p.baseOffset);
    }
    expect(await stopped).toBe(0);
    await c.waitClosed(5000);

    broker = await BrokerProcess.start({ dataDir });
    const again = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    try {
      const read = await readPartition(again, 'drained', 0);
      expect(new Map(read.map((r) => [r.value!.toString(), BigInt(r.offset)]))).toEqual(answered);
    } finally {
      await again.close();
    }
  });

  it('stops on SIGTERM without waiting for parked long polls, and keeps every acknowledged record', async () => {
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    const [created] = await client.createTopics([{ name: 'kept', numPartitions: 1 }]);
    expect(created!.errorCode).toBe(0);
    const [r] = await client.produce([{ topic: 'kept', partition: 0, records: await buildRecordBatch([{ value: 'one' }, { value: 'two' }]) }]);
    expect(r!.errorCode).toBe(0);
    await client.close();

    const parked = await RawConnection.connect(broker.port);
    parked.send(FetchApi, 12, fetchRequest({ maxWaitMs: 60_000, topics: [{ topic: 'kept', partitions: [{ partition: 0, offset: 2n }] }] }));
    await expect(parked.nextFrame(200)).rejects.toThrow(/no response/);
    const idle = await RawConnection.connect(broker.port);

    const t0 = Date.now();
    const code = await broker.kill('SIGTERM');
    expect(code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(broker.logs.some((l) => l.includes('"Ledgerline stopped"'))).toBe(true);
    await parked.waitClosed(5000);
    await idle.waitClosed(5000);

    broker = await BrokerProcess.start({ dataDir });
    const again = await KafkaClient.connect({ bootstrap: broker.bootstrap });
    try {
      expect((await readPartition(again, 'kept', 0)).map((x) => x.value!.toString())).toEqual(['one', 'two']);
    } finally {
      await again.close();
    }
  });
});
