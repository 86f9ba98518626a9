/**
 * The stores are chosen by configuration: `ledgerline.ledger.store` and `ledgerline.metadata.store` name the
 * engines the broker opens, and a name it does not know stops it before anything starts.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readPartition } from '../support/records.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

describe('store selection', () => {
  it('serves produce and fetch on the in-memory stores and writes nothing into the data directory', async () => {
    const broker = await BrokerProcess.start({ configs: { 'ledgerline.ledger.store': 'memory', 'ledgerline.metadata.store': 'memory' } });
    try {
      const client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
      try {
        const [created] = await client.createTopics([{ name: 'mem', numPartitions: 1 }]);
        expect(created!.errorCode).toBe(0);
        const [r] = await client.produce([{ topic: 'mem', partition: 0, records: await buildRecordBatch([{ value: 'a' }, { value: 'b' }]) }]);
        expect(r!.errorCode).toBe(0);
        expect((await readPartition(client, 'mem', 0)).map((x) => x.value!.toString())).toEqual(['a', 'b']);
      } finally {
        await client.close();
      }
      for (const sub of ['ledgers', 'metadata']) {
        const dir = join(broker.dataDir, sub);
        expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
      }
    } finally {
      await broker.stop();
    }
  });

  it('refuses an unknown store name before starting, naming the accepted ones', async () => {
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'start', '--set', 'ledgerline.ledger.store=tape', '--set', 'listeners=PLAINTEXT://127.0.0.1:0'], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error('did not exit within 20 s'));
      }, 20_000);
      child.once('exit', (c) => {
        clearTimeout(timer);
        resolve({ code: c, stderr: err });
      });
    });
    expect(code).toBe(2);
    expect(stderr).toContain('Invalid value tape for configuration ledgerline.ledger.store: String must be one of: local, memory');
  });
});
