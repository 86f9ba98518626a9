/** Ledger metadata in BookKeeper's format version 3 and its znode paths (HierarchicalLedgerManager). */
import { describe, expect, it } from 'vitest';
import { DigestType } from '../../../../src/ledger/bookkeeper/digest.js';
import { ensembleFor, ledgerIdOfPath, ledgerPath, parseLayout, parseLedgerMetadata, serializeLedgerMetadata, type BkLedgerMetadata } from '../../../../src/ledger/bookkeeper/metadata.js';

const sample: BkLedgerMetadata = {
  ensembleSize: 3,
  writeQuorumSize: 3,
  ackQuorumSize: 2,
  state: 'CLOSED',
  lastEntryId: 41,
  length: 43008,
  digestType: DigestType.CRC32C,
  password: Buffer.from('pw'),
  ctime: 1764644000000,
  ensembles: [
    { firstEntryId: 0, bookies: ['127.0.0.1:3181', '127.0.0.1:3182', '127.0.0.1:3183'] },
    { firstEntryId: 17, bookies: ['127.0.0.1:3181', '127.0.0.1:3184', '127.0.0.1:3183'] },
  ],
  customMetadata: new Map([['application', Buffer.from('ledgerline')]]),
  cToken: 0,
};

describe('bookkeeper ledger metadata', () => {
  it('serializes as BookieMetadataFormatVersion\\t3\\n + a length-delimited LedgerMetadataFormat, and parses back', () => {
    const bytes = serializeLedgerMetadata(sample);
    expect(bytes.subarray(0, 30).toString('utf8')).toBe('BookieMetadataFormatVersion\t3\n');
    const back = parseLedgerMetadata(bytes);
    expect({ ...back, password: Buffer.from(back.password), customMetadata: [...back.customMetadata].map(([k, v]) => [k, Buffer.from(v).toString()]) }).toEqual({
      ...sample,
      password: Buffer.from('pw'),
      customMetadata: [['application', 'ledgerline']],
    });
  });

  it('refuses a foreign header, an old text format and a truncated message', () => {
    const bytes = serializeLedgerMetadata(sample);
    expect(() => parseLedgerMetadata(Buffer.from('garbage'))).toThrow(/header corrupt/);
    expect(() => parseLedgerMetadata(Buffer.from('BookieMetadataFormatVersion\t2\nquorumSize: 2\n'))).toThrow(/version 2/);
    expect(() => parseLedgerMetadata(bytes.subarray(0, bytes.length - 5))).toThrow(/truncated/);
  });

  it('finds the ensemble of an entry by the segments first entry ids', () => {
    expect(ensembleFor(sample, 0).firstEntryId).toBe(0);
    expect(ensembleFor(sample, 16).firstEntryId).toBe(0);
    expect(ensembleFor(sample, 17).firstEntryId).toBe(17);
    expect(ensembleFor(sample, 1000).firstEntryId).toBe(17);
  });

  it('names znodes as the hierarchical and long hierarchical ledger managers do', () => {
    expect(ledgerPath('/ledgers', 42, 'hierarchical')).toBe('/ledgers/00/0000/L0042');
    expect(ledgerPath('/ledgers', 1234567890, 'hierarchical')).toBe('/ledgers/12/3456/L7890');
    expect(ledgerPath('/ledgers', 2 ** 32 + 5, 'hierarchical')).toBe('/ledgers/000/0000/0042/9496/L7301');
    expect(ledgerPath('/ledgers', 42, 'longhierarchical')).toBe('/ledgers/000/0000/0000/0000/L0042');
    expect(ledgerIdOfPath('00/0000/L0042')).toBe(42);
    expect(ledgerIdOfPath('000/0000/0042/9496/L7301')).toBe(2 ** 32 + 5);
    expect(ledgerIdOfPath('available/L0042')).toBeNull();
  });

  it('reads the layout BookKeeper writes to /ledgers/LAYOUT', () => {
    expect(parseLayout('2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1\n')).toBe('hierarchical');
    expect(parseLayout('2\norg.apache.bookkeeper.meta.LongHierarchicalLedgerManagerFactory:1\n')).toBe('longhierarchical');
    expect(() => parseLayout('2\norg.apache.bookkeeper.meta.FlatLedgerManagerFactory:1\n')).toThrow(/not supported/);
  });
});
