/**
 * Connection limits changed at runtime (kafka-configs --entity-type brokers --alter, IncrementalAlterConfigs):
 * max.connections.per.ip set for this broker applies to the next connection, and removing it lifts the limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { IncrementalAlterConfigsApi } from '../../protocol/messages/044-incremental-alter-configs.gen.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

let broker: BrokerProcess;

beforeAll(async () => {
  broker = await BrokerProcess.start({ configs: { 'node.id': '1' } });
}, 60_000);

afterAll(async () => {
  await broker?.stop();
});

async function served(c: RawConnection): Promise<boolean> {
  c.send(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'limits', clientSoftwareVersion: '1' }));
  return Promise.race([c.nextFrame(10_000).then(() => true, () => false), c.closed.then(() => false)]);
}

describe('connection limits', () => {
  it('apply max.connections.per.ip set at runtime to the next connection, and lift it when removed', async () => {
    const admin = await RawConnection.connect(broker.port);
    const alter = async (value: string | null) => {
      const res = await admin.request(IncrementalAlterConfigsApi, 1, {
        resources: [{ resourceType: 4, resourceName: '1', configs: [{ name: 'max.connections.per.ip', configOperation: value === null ? 1 : 0, value }] }],
        validateOnly: false,
      });
      expect(res.responses.map((r) => r.errorCode)).toEqual([ErrorCode.NONE]);
    };
    const conns: RawConnection[] = [];
    try {
      await alter('3');
      // The admin connection is one of the three.
      for (let i = 0; i < 3; i++) conns.push(await RawConnection.connect(broker.port));
      const outcomes = await Promise.all(conns.map(served));
      expect(outcomes).toEqual([true, true, false]);
      // The broker's log line may reach the test after the client saw the close.
      await waitFor('the refusal in the log', () => broker.logs.some((l) => l.includes('Too many connections from 127.0.0.1 (maximum = 3)')));
      await alter(null);
      const after = await RawConnection.connect(broker.port);
      conns.push(after);
      expect(await served(after)).toBe(true);
    } finally {
      for (const c of conns) c.destroy();
      admin.destroy();
    }
  }, 60_000);
});
