/**
 * A node with a controller listener (controller.listener.names), as a KRaft combined node has: the controller
 * APIs there, the broker APIs on the broker listener, the voter's endpoint and directory id in DescribeQuorum.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { DescribeClusterApi } from '../../protocol/messages/060-describe-cluster.gen.js';
import { DescribeQuorumApi } from '../../protocol/messages/055-describe-quorum.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { metadataRequest } from '../support/requests.js';

let broker: BrokerProcess;

/** The bound port of a listener, from the broker's "Ledgerline started" line. */
function portOf(name: string): number {
  const started = [...broker.logs].reverse().find((l) => l.includes('"Ledgerline started"'))!;
  const listener = (JSON.parse(started) as { listeners: string[] }).listeners.find((l) => l.startsWith(`${name}://`))!;
  return Number(/:(\d+)$/.exec(listener)![1]);
}

const quorumRequest = DescribeQuorumApi.request.create({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });

beforeAll(async () => {
  broker = await BrokerProcess.start({ configs: { listeners: 'PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0', 'controller.listener.names': 'CONTROLLER' } });
});

afterAll(async () => {
  await broker?.stop();
});

describe('a controller listener', () => {
  it('serves the controller APIs and closes the connection for a broker API, as a KRaft controller listener does', async () => {
    const controller = await RawConnection.connect(portOf('CONTROLLER'));
    const versions = await controller.request(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'it', clientSoftwareVersion: '1' }));
    const keys = versions.apiKeys.map((k) => k.apiKey);
    expect(keys).toEqual(expect.arrayContaining([18, 55, 60]));
    expect(keys).not.toContain(0); // Produce
    expect(keys).not.toContain(3); // Metadata
    const cluster = await controller.request(DescribeClusterApi, 1, DescribeClusterApi.request.create({ endpointType: 2 }));
    expect(cluster).toMatchObject({ errorCode: ErrorCode.NONE, endpointType: 2, controllerId: 1, brokers: [{ brokerId: 1, host: '127.0.0.1', port: portOf('CONTROLLER') }] });
    controller.send(MetadataApi, 12, metadataRequest(null, false));
    await controller.waitClosed();
  });

  it('is never advertised to clients, and is the voter endpoint with a directory id that survives a restart', async () => {
    const conn = await RawConnection.connect(broker.port);
    const md = await conn.request(MetadataApi, 12, metadataRequest(null, false));
    expect(md.brokers).toEqual([expect.objectContaining({ nodeId: 1, host: '127.0.0.1', port: broker.port })]);
    const quorum = await conn.request(DescribeQuorumApi, 2, quorumRequest);
    expect(quorum.nodes).toEqual([expect.objectContaining({ nodeId: 1, listeners: [expect.objectContaining({ name: 'CONTROLLER', host: '127.0.0.1', port: portOf('CONTROLLER') })] })]);
    const voter = quorum.topics[0]!.partitions[0]!.currentVoters[0]!;
    expect(voter.replicaDirectoryId).not.toBe(ZERO_UUID);
    expect(voter.lastFetchTimestamp).toBeGreaterThan(0n);
    conn.destroy();
    await broker.restart();
    const again = await RawConnection.connect(broker.port);
    const after = await again.request(DescribeQuorumApi, 2, quorumRequest);
    expect(after.topics[0]!.partitions[0]!.currentVoters[0]!.replicaDirectoryId).toBe(voter.replicaDirectoryId);
    again.destroy();
  });
});
