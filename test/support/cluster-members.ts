/**
 * Ledgerline brokers as members of one cluster on the development cluster's ZooKeeper (the metadata store)
 * and bookies (the ledger store), for the integration tests that run several of them: whether the engines
 * are there, the members' configs, and starting them.
 */
import type { DevCluster } from '../../compat/cluster/index.js';
import { bookKeeperClasspath, requireBookKeeper } from '../../compat/cluster/index.js';
import { BROKER_CONFIG_BY_NAME } from '../../src/cluster/config-defs.js';
import { BrokerProcess } from './broker-process.js';

/** Why a test of cluster members cannot run here, or null when it can. */
export function missingClusterEngine(): string | null {
  const accepts = (name: string, value: string) => BROKER_CONFIG_BY_NAME.get(name)?.oneOf?.includes(value) === true;
  if (!accepts('ledgerline.metadata.store', 'zookeeper')) return 'ledgerline.metadata.store refuses zookeeper';
  if (!accepts('ledgerline.ledger.store', 'bookkeeper')) return 'ledgerline.ledger.store refuses bookkeeper';
  if (bookKeeperClasspath() === undefined) return 'the BookKeeper classpath is not built (compat/bookkeeper)';
  return null;
}

/**
 * The gate of such a test: `missing` (null when it runs) and `required` (LEDGERLINE_REQUIRE_BOOKKEEPER=1 turns
 * a missing classpath into a failure; engines not there yet still skip).
 */
export function clusterEngineGate(): { missing: string | null; required: boolean } {
  const missing = missingClusterEngine();
  return { missing, required: requireBookKeeper() && missing !== null && missing.startsWith('the BookKeeper classpath') };
}

/** The configs of member `nodeId` on `dev` (broker.session.timeout.ms 4 s), with `extra` over them. */
export function memberConfigs(dev: Pick<DevCluster, 'zkConnect' | 'metadataServiceUri'>, nodeId: number, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'node.id': String(nodeId),
    'ledgerline.cluster.membership': 'shared',
    'broker.session.timeout.ms': '4000',
    'ledgerline.metadata.store': 'zookeeper',
    'ledgerline.metadata.zookeeper.connect': dev.zkConnect,
    'ledgerline.ledger.store': 'bookkeeper',
    'ledgerline.bookkeeper.metadata.service.uri': dev.metadataServiceUri,
    ...extra,
  };
}

/** Starts members 1..count one after another; each is pushed to `started` as soon as it runs. */
export async function startMembers(dev: Pick<DevCluster, 'zkConnect' | 'metadataServiceUri'>, count: number, started: BrokerProcess[], extra: Record<string, string> = {}): Promise<BrokerProcess[]> {
  const out: BrokerProcess[] = [];
  for (let id = 1; id <= count; id++) {
    const b = await BrokerProcess.start({ configs: memberConfigs(dev, id, extra), startTimeoutMs: 60_000 });
    started.push(b);
    out.push(b);
  }
  return out;
}
