/**
 * The identities a node keeps across restarts, created by compare-and-set on the metadata store by the first
 * start that needs them, as `kafka-storage format` writes them into Kafka's meta.properties:
 *
 *   /cluster          {"clusterId": "<uuid>", "formatVersion": 1}    one per cluster, shared by every node
 *   /nodes/<nodeId>   {"directoryId": "<uuid>", "formatVersion": 1}  one per node: the id of its metadata
 *                                                                    directory (KIP-858 `directory.id`),
 *                                                                    reported as its voter's (KIP-853)
 *
 * A concurrent first start of two processes agrees on one value: the loser of the compare-and-set reads the
 * winner's.
 */
import { randomDirectoryId, randomUuid } from '../../protocol/wire/uuid.js';
import { CLUSTER_KEY, nodeKey } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';

async function loadOrCreate<T>(metadata: MetadataStore, key: string, create: () => T, read: (v: Record<string, unknown>) => T | undefined): Promise<T> {
  for (;;) {
    const kv = await metadata.get(key);
    if (kv) {
      const v = read(JSON.parse(Buffer.from(kv.value).toString('utf8')) as Record<string, unknown>);
      if (v === undefined) throw new Error(`the metadata store's ${key} record is not one this version reads`);
      return v;
    }
    const value = create();
    const res = await metadata.compareAndSet(key, { version: 0 }, Buffer.from(JSON.stringify({ ...value, formatVersion: 1 })));
    if (res.succeeded) return value;
  }
}

/** The cluster id, created by the first broker to start on a metadata store. */
export async function loadClusterId(metadata: MetadataStore): Promise<string> {
  const v = await loadOrCreate(metadata, CLUSTER_KEY, () => ({ clusterId: randomUuid() }), (r) => (typeof r.clusterId === 'string' ? { clusterId: r.clusterId } : undefined));
  return v.clusterId;
}

/** This node's directory id, created by its first start. */
export async function loadDirectoryId(metadata: MetadataStore, nodeId: number): Promise<string> {
  const v = await loadOrCreate(metadata, nodeKey(nodeId), () => ({ directoryId: randomDirectoryId() }), (r) => (typeof r.directoryId === 'string' ? { directoryId: r.directoryId } : undefined));
  return v.directoryId;
}
