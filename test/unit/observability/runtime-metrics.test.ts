/**
 * The event-loop delay histogram sees the loop held, and the group-commit histograms add up to what the
 * ledger store made durable (a real LocalLedgerStore on the in-memory file system).
 */
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { openMemoryLedgerStore, type LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { ledgerStoreGroupCommits, ledgerStoreReads } from '../../../src/ledger/open-store.js';
import { registerEventLoopMetrics, registerGroupCommitMetrics, registerStoreReadMetrics } from '../../../src/observability/runtime-metrics.js';

function value(text: string, series: string): number {
  const m = new RegExp(`^${series.replace(/[{}"+.]/g, (c) => `\\${c}`)} (\\S+)$`, 'm').exec(text);
  if (!m) throw new Error(`no ${series} in:\n${text}`);
  return Number(m[1]);
}

async function until(deadlineMs: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

let stop: (() => void) | null = null;
let store: LocalLedgerStore | null = null;
afterEach(async () => {
  stop?.();
  stop = null;
  await store?.close();
  store = null;
});

describe('event-loop delay', () => {
  it('observes a sample every few milliseconds, and a loop held for 120 ms as one late sample', async () => {
    const registry = new Registry();
    stop = registerEventLoopMetrics(registry, 5);
    await until(5_000, async () => value(await registry.metrics(), 'ledgerline_event_loop_delay_seconds_count') >= 3);
    const held = Date.now();
    while (Date.now() - held < 120);
    await until(5_000, async () => value(await registry.metrics(), 'ledgerline_event_loop_delay_seconds_bucket{le="0.1"}') < value(await registry.metrics(), 'ledgerline_event_loop_delay_seconds_count'));
    const text = await registry.metrics();
    expect(value(text, 'ledgerline_event_loop_delay_seconds_sum')).toBeGreaterThanOrEqual(0.1);
  });

  it('stops sampling when told', async () => {
    const registry = new Registry();
    stop = registerEventLoopMetrics(registry, 5);
    await until(5_000, async () => value(await registry.metrics(), 'ledgerline_event_loop_delay_seconds_count') >= 1);
    stop();
    const before = value(await registry.metrics(), 'ledgerline_event_loop_delay_seconds_count');
    await new Promise((r) => setTimeout(r, 50));
    expect(value(await registry.metrics(), 'ledgerline_event_loop_delay_seconds_count')).toBe(before);
  });
});

describe('group commits', () => {
  it('count every fsync of the commit pipeline with the entries and bytes it made durable', async () => {
    store = await openMemoryLedgerStore();
    const registry = new Registry();
    registerGroupCommitMetrics(registry, ledgerStoreGroupCommits(store));
    const writer = await store.create();
    // Queued in one turn of the event loop: they share group commits.
    await Promise.all(Array.from({ length: 50 }, (_, i) => writer.append(Buffer.alloc(100 + i))));
    for (let i = 0; i < 3; i++) await writer.append(Buffer.alloc(10));
    const text = await registry.metrics();
    expect(value(text, 'ledgerline_storage_group_commit_entries_sum')).toBe(53);
    expect(value(text, 'ledgerline_storage_group_commit_bytes_sum')).toBe(store.stats.bytesAppended);
    const commits = value(text, 'ledgerline_storage_group_commit_entries_count');
    expect(commits).toBe(store.stats.fsyncs);
    // The three appends awaited one by one take an fsync each; the fifty share far fewer.
    expect(commits).toBeGreaterThanOrEqual(4);
    expect(commits).toBeLessThan(20);
    expect(value(text, 'ledgerline_storage_fsync_seconds_count')).toBe(commits);
  });

  it('leave the histograms empty for a store whose group commits happen elsewhere', async () => {
    const registry = new Registry();
    registerGroupCommitMetrics(registry, null);
    expect(value(await registry.metrics(), 'ledgerline_storage_group_commit_entries_count')).toBe(0);
  });
});

describe('store reads', () => {
  it('count the entries handed to readers by where the store found them, and what it read ahead', async () => {
    store = await openMemoryLedgerStore({ cacheBytes: 64 * 1024 });
    const registry = new Registry();
    registerStoreReadMetrics(registry, ledgerStoreReads(store));
    expect(value(await registry.metrics(), 'ledgerline_storage_entries_read_total{source="read_ahead"}')).toBe(0);
    const writer = await store.create();
    for (let i = 0; i < 100; i++) await writer.append(Buffer.alloc(4096, i));
    await store.read(writer.ledgerId, 95, 99); // the tail cache
    await store.read(writer.ledgerId, 0, 4); // the segment files, then 5 more read ahead
    await store.read(writer.ledgerId, 5, 9); // those 5, and 5 more read ahead
    const text = await registry.metrics();
    expect(value(text, 'ledgerline_storage_entries_read_total{source="tail_cache"}')).toBe(5);
    expect(value(text, 'ledgerline_storage_entries_read_total{source="segment_files"}')).toBe(5);
    expect(value(text, 'ledgerline_storage_entries_read_total{source="read_ahead"}')).toBe(5);
    expect(value(text, 'ledgerline_storage_entries_read_ahead_total')).toBe(10);
    // Counters: a scrape adds what happened since the last one.
    await store.read(writer.ledgerId, 10, 14);
    expect(value(await registry.metrics(), 'ledgerline_storage_entries_read_total{source="read_ahead"}')).toBe(10);
  });

  it('stay at 0 for a store that keeps no such count', async () => {
    const registry = new Registry();
    registerStoreReadMetrics(registry, null);
    expect(value(await registry.metrics(), 'ledgerline_storage_entries_read_ahead_total')).toBe(0);
  });
});
