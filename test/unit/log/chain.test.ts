import { describe, expect, it } from 'vitest';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';
import {
  ChainKeys,
  commitChainChange,
  decodeHead,
  decodeLedger,
  encodeHead,
  encodeLedger,
  loadChain,
  type ChainHead,
  type SealedChainLedger,
} from '../../../src/log/chain.js';

const head: ChainHead = { epoch: 4, ownerId: 'abc', owner: 'broker-1', logStartOffset: 10, changes: 7, updatedAtMs: 1 };
const sealed: SealedChainLedger = {
  ledgerId: 9,
  state: 'sealed',
  startOffset: 0,
  epoch: 3,
  createdAtMs: 1,
  endOffset: 120,
  entries: 40,
  bytes: 4096,
  maxTimestamp: -1,
  sealedAtMs: 2,
  indexLedgerId: null,
};

describe('chain values', () => {
  it('round-trips heads and ledgers as versioned JSON', () => {
    expect(decodeHead(encodeHead(head), 'k')).toEqual(head);
    expect(decodeLedger(encodeLedger(sealed), 'k')).toEqual(sealed);
    const open = { ledgerId: 12, state: 'open', startOffset: 120, epoch: 4, createdAtMs: 5 } as const;
    expect(decodeLedger(encodeLedger(open), 'k')).toEqual(open);
    expect(JSON.parse(encodeLedger(open).toString()).format).toBe(1);
  });

  it('refuses values from a newer format, broken JSON and impossible fields', () => {
    const future = Buffer.from(JSON.stringify({ ...head, format: 2 }));
    expect(() => decodeHead(future, 'k')).toThrow(/format 2/);
    expect(() => decodeHead(Buffer.from('{'), 'k')).toThrow(/JSON/);
    const backwards = encodeLedger({ ...sealed, endOffset: -1 });
    expect(() => decodeLedger(backwards, 'k')).toThrow(/sealed-ledger/);
    expect(() => decodeLedger(Buffer.from(JSON.stringify({ ...sealed, format: 1, state: 'gone' })), 'k')).toThrow(/unknown state/);
  });
});

describe('chain in the metadata store', () => {
  it('commits only against the head revision it was given, and lists ledgers in offset order', async () => {
    const metadata = await openMemoryMetadataStore();
    const keys = new ChainKeys('t', 1);
    const first = await commitChainChange(metadata, keys, 0, head, { put: [sealed, { ...sealed, ledgerId: 11, startOffset: 120, endOffset: 130 }] });
    expect(first.ok).toBe(true);
    expect((await commitChainChange(metadata, keys, 0, head, {})).ok).toBe(false);
    const loaded = await loadChain(metadata, keys);
    expect(loaded.head?.modRevision).toBe(first.ok ? first.revision : -1);
    expect(loaded.ledgers.map((l) => l.ledgerId)).toEqual([9, 11]);
    const second = await commitChainChange(metadata, keys, loaded.head!.modRevision, { ...head, changes: 8 }, { delete: [0] });
    expect(second.ok).toBe(true);
    expect((await loadChain(metadata, keys)).ledgers.map((l) => l.ledgerId)).toEqual([11]);
    await metadata.close();
  });

  it('detects a chain whose ledgers overlap', async () => {
    const metadata = await openMemoryMetadataStore();
    const keys = new ChainKeys('t', 1);
    await commitChainChange(metadata, keys, 0, head, { put: [sealed, { ...sealed, ledgerId: 11, startOffset: 100 }] });
    await expect(loadChain(metadata, keys)).rejects.toMatchObject({ code: 'LL_ERR_LOG_CORRUPT' });
    await metadata.close();
  });
});
