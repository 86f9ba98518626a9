/** The BookKeeper store's config: quorums from Kafka's replication settings, overrides, the metadata URI. */
import { describe, expect, it } from 'vitest';
import { bookKeeperStoreConfig, parseMetadataServiceUri, quorumForLedger, quorumFrom } from '../../../../src/ledger/bookkeeper/config.js';
import { DigestType } from '../../../../src/ledger/bookkeeper/digest.js';

describe('bookkeeper store config', () => {
  it('derives E = Qw = replication.factor and Qa = min.insync.replicas', () => {
    expect(quorumFrom(3, 2)).toEqual({ ensembleSize: 3, writeQuorum: 3, ackQuorum: 2 });
    expect(quorumFrom(1, 2)).toEqual({ ensembleSize: 1, writeQuorum: 1, ackQuorum: 1 });
    expect(quorumFrom(3, 2, { ensembleSize: 5 })).toEqual({ ensembleSize: 5, writeQuorum: 3, ackQuorum: 2 });
    expect(() => quorumFrom(3, 2, { writeQuorum: 4 })).toThrow(/invalid BookKeeper quorum/);
  });

  it("gives each ledger its topic's quorum (RF 3, min.insync 2: E 3, Qw 3, Qa 2) unless the operator fixed the sizes", () => {
    const uri = { 'ledgerline.bookkeeper.metadata.service.uri': 'zk+hierarchical://127.0.0.1:2181/ledgers' } as Record<string, string>;
    const plain = bookKeeperStoreConfig((n) => uri[n] ?? null, 1 << 20);
    expect(plain.quorum).toEqual({ ensembleSize: 1, writeQuorum: 1, ackQuorum: 1 });
    expect(quorumForLedger(plain, { replicationFactor: 3, minInsyncReplicas: 2 })).toEqual({ ensembleSize: 3, writeQuorum: 3, ackQuorum: 2 });
    expect(quorumForLedger(plain, { replicationFactor: 2, minInsyncReplicas: 3 })).toEqual({ ensembleSize: 2, writeQuorum: 2, ackQuorum: 2 });
    expect(quorumForLedger(plain, {})).toEqual(plain.quorum);
    const fixed = { ...uri, 'ledgerline.bookkeeper.ensemble.size': '3', 'ledgerline.bookkeeper.write.quorum.size': '3', 'ledgerline.bookkeeper.ack.quorum.size': '2' } as Record<string, string>;
    const operator = bookKeeperStoreConfig((n) => fixed[n] ?? null, 1 << 20);
    expect(quorumForLedger(operator, { replicationFactor: 1, minInsyncReplicas: 1 })).toEqual({ ensembleSize: 3, writeQuorum: 3, ackQuorum: 2 });
    expect(quorumForLedger(operator, { ensembleSize: 2, writeQuorum: 2, ackQuorum: 1 })).toEqual({ ensembleSize: 2, writeQuorum: 2, ackQuorum: 1 });
  });

  it('reads the Kafka-style names and refuses a missing URI or an unknown digest', () => {
    const values: Record<string, string> = {
      'ledgerline.bookkeeper.metadata.service.uri': 'zk+hierarchical://127.0.0.1:2181/ledgers',
      'default.replication.factor': '3',
      'min.insync.replicas': '2',
      'ledgerline.bookkeeper.ack.quorum.size': '3',
    };
    const c = bookKeeperStoreConfig((n) => values[n] ?? null, 1 << 20);
    expect(c.quorum).toEqual({ ensembleSize: 3, writeQuorum: 3, ackQuorum: 3 });
    expect(c.digestType).toBe(DigestType.CRC32C);
    expect(() => bookKeeperStoreConfig(() => null, 1)).toThrow(/ledgerline.bookkeeper.metadata.service.uri/);
    expect(() => bookKeeperStoreConfig((n) => (n === 'ledgerline.bookkeeper.digest.type' ? 'MD5' : values[n] ?? null), 1)).toThrow(/must be one of/);
  });

  it("parses BookKeeper's metadataServiceUri", () => {
    expect(parseMetadataServiceUri('zk+hierarchical://127.0.0.1:2181;127.0.0.2:2181/ledgers')).toEqual({ connectString: '127.0.0.1:2181,127.0.0.2:2181', ledgersRoot: '/ledgers', layout: 'hierarchical' });
    expect(parseMetadataServiceUri('zk://zk1:2181/bk/ledgers').ledgersRoot).toBe('/bk/ledgers');
    expect(() => parseMetadataServiceUri('http://x')).toThrow(/Invalid value/);
  });
});
