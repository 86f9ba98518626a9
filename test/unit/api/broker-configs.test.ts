/**
 * The cluster-level broker resource (`kafka-configs --entity-type brokers --entity-default`) through
 * DescribeConfigs, IncrementalAlterConfigs and AlterConfigs, over a real ClusterConfigs on an in-memory store.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createAlterConfigsRequest } from '../../../protocol/messages/033-alter-configs.gen.js';
import { createDescribeConfigsRequest } from '../../../protocol/messages/032-describe-configs.gen.js';
import { createIncrementalAlterConfigsRequest } from '../../../protocol/messages/044-incremental-alter-configs.gen.js';
import { describeConfigs } from '../../../src/api/032-describe-configs.js';
import { alterConfigs } from '../../../src/api/033-alter-configs.js';
import { incrementalAlterConfigs } from '../../../src/api/044-incremental-alter-configs.js';
import { ClusterConfigs, ELR_BROKER_MIN_ISR, ELR_MIN_ISR_REMOVAL } from '../../../src/cluster/cluster-configs.js';
import { ConfigSource } from '../../../src/cluster/config-defs.js';
import { loadConfig } from '../../../src/config.js';
import { MemoryMetadataVolume, openMemoryMetadataStore } from '../../../src/metadata/index.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { answer, fakeNode, requestContext } from './fakes.js';

const BROKER = 4;
const SET = 0;
const DELETE = 1;
let store: MetadataStore;
let clusterConfigs: ClusterConfigs;

async function setup(): Promise<void> {
  store = await openMemoryMetadataStore(new MemoryMetadataVolume());
  clusterConfigs = new ClusterConfigs(store, 1);
  await clusterConfigs.load('1');
}

afterEach(async () => {
  await clusterConfigs.close();
  await store.close();
});

function services() {
  return { node: fakeNode({ nodeId: 1 }), config: loadConfig({ overrides: [['log.dirs', '/unused']] }), clusterConfigs, topics: {} as never };
}

async function describeBroker(name: string, keys: string[] | null = null) {
  const res = await answer(describeConfigs.handle(createDescribeConfigsRequest({ resources: [{ resourceType: BROKER, resourceName: name, configurationKeys: keys }], includeSynonyms: true }), requestContext(services(), { apiVersion: 4 })));
  return res.results[0]!;
}

describe('the cluster-level broker resource', () => {
  it('describes only the values set at the cluster level, as Kafka describes its dynamic defaults', async () => {
    await setup();
    const def = await describeBroker('');
    expect(def.errorCode).toBe(ErrorCode.NONE);
    expect(def.configs.map((c) => [c.name, c.value, c.configSource])).toEqual([['min.insync.replicas', '1', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]]);
    const node = await describeBroker('1', ['min.insync.replicas', 'log.retention.ms']);
    expect(node.configs.find((c) => c.name === 'min.insync.replicas')).toMatchObject({ value: '1', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect(node.configs.find((c) => c.name === 'log.retention.ms')).toMatchObject({ configSource: ConfigSource.DEFAULT_CONFIG });
  });

  it('sets and deletes cluster-level values with IncrementalAlterConfigs, refusing what ELR forbids', async () => {
    await setup();
    const alter = (name: string, configs: { name: string; configOperation: number; value: string | null }[], validateOnly = false) =>
      answer(incrementalAlterConfigs.handle(createIncrementalAlterConfigsRequest({ resources: [{ resourceType: BROKER, resourceName: name, configs }], validateOnly }), requestContext(services(), { apiVersion: 1 })));
    expect((await alter('', [{ name: 'log.retention.ms', configOperation: SET, value: '60000' }])).responses[0]).toMatchObject({ errorCode: ErrorCode.NONE });
    expect((await describeBroker('1', ['log.retention.ms'])).configs[0]).toMatchObject({ value: '60000', configSource: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect((await alter('', [{ name: 'log.retention.ms', configOperation: DELETE, value: null }])).responses[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(clusterConfigs.get('log.retention.ms')).toBeUndefined();
    expect((await alter('', [{ name: 'min.insync.replicas', configOperation: DELETE, value: null }])).responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: ELR_MIN_ISR_REMOVAL });
    expect((await alter('1', [{ name: 'min.insync.replicas', configOperation: SET, value: '2' }])).responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: ELR_BROKER_MIN_ISR });
    expect((await alter('', [{ name: 'log.retention.ms', configOperation: SET, value: 'soon' }])).responses[0]!.errorCode).toBe(ErrorCode.INVALID_CONFIG);
    expect((await alter('', [{ name: 'log.retention.ms', configOperation: SET, value: '1' }], true)).responses[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(clusterConfigs.get('log.retention.ms')).toBeUndefined();
  });

  it('replaces the whole set with the legacy AlterConfigs, which must keep min.insync.replicas', async () => {
    await setup();
    const alter = (configs: { name: string; value: string }[]) =>
      answer(alterConfigs.handle(createAlterConfigsRequest({ resources: [{ resourceType: BROKER, resourceName: '', configs }], validateOnly: false }), requestContext(services(), { apiVersion: 2 })));
    expect((await alter([{ name: 'log.retention.ms', value: '1000' }])).responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG, errorMessage: ELR_MIN_ISR_REMOVAL });
    expect((await alter([{ name: 'log.retention.ms', value: '1000' }, { name: 'min.insync.replicas', value: '2' }])).responses[0]!.errorCode).toBe(ErrorCode.NONE);
    expect([...clusterConfigs.entries()].sort()).toEqual([['log.retention.ms', '1000'], ['min.insync.replicas', '2']]);
  });
});
