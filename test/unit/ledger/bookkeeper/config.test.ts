/** The BookKeeper store's config: quorums from Kafka's replication settings, overrides, the metadata URI. */
import { describe, expect, it } from 'vitest';
import { bookKeeperStoreConfig, parseMetadataServiceUri, quorumFrom } from '../../../../src/ledger/bookkeeper/config.js';
import { DigestType } from '../../../../src/ledger/bookkeeper/digest.js';

describe('bookkeeper store config', () => {
  it('derives E = Qw = replication.factor and Qa = min.insync.replicas', () => {
    expect(quorumFrom(3, 2)).toEqual({ ensembleSize: 3, writeQuorum: 3, ackQuorum: 2 });
    expect(quorumFrom(1, 2)).toEqual({ ensembleSize: 1, writeQuorum: 1, ackQuorum: 1 });
    expect(quorumFrom(3, 2, { ensembleSize: 5 })).toEqual({ ensembleSize: 5, writeQuorum: 3, ackQuorum: 2 });
    expect(() => quorumFrom(3, 2, { writeQuorum: 4 })).toThrow(/invalid BookKeeper quorum/);
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
