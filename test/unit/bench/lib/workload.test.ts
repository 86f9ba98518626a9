import { describe, expect, it } from 'vitest';
import { WorkloadError, applyOverrides, loadWorkload, parseBytes, parseRate, parseWorkload, recordsPerBatch, workloadNames } from '../../../../bench/lib/workload.js';

describe('workloads', () => {
  it('loads every shipped workload file', () => {
    const names = workloadNames();
    for (const required of ['1-topic-16-partitions-1kb', '1-topic-16-partitions-1kb-50pct', '100-topics-1kb', 'catch-up-read', 'many-partitions', 'smoke']) {
      expect(names).toContain(required);
    }
    for (const name of names) expect(loadWorkload(name).name).toBe(name);
  });

  it('resolves the 50% workload against its reference and the catch-up backlog as bytes', () => {
    expect(loadWorkload('1-topic-16-partitions-1kb-50pct').rate).toEqual({ kind: 'percent', percent: 50, reference: '1-topic-16-partitions-1kb' });
    expect(loadWorkload('catch-up-read').backlogBytes).toBe(5 * 2 ** 30);
    const many = loadWorkload('many-partitions');
    expect(many.topics * many.partitionsPerTopic).toBe(10_000);
  });

  it('fills defaults and rejects unknown fields and bad values', () => {
    const w = parseWorkload({ name: 'w' });
    expect(w).toMatchObject({ topics: 1, partitionsPerTopic: 1, recordSize: 1024, acks: -1, compression: 'none', rate: { kind: 'max' } });
    expect(() => parseWorkload({ name: 'w', partitons: 3 })).toThrow(/unknown field "partitons"/);
    expect(() => parseWorkload({ name: 'w', acks: 2 })).toThrow(WorkloadError);
    expect(() => parseWorkload({ name: 'w', compression: 'brotli' })).toThrow(/unknown compression/);
    expect(() => parseWorkload({ name: 'w', recordSize: 1.5 })).toThrow(/recordSize must be an integer/);
    expect(() => parseWorkload({ name: 'w', rate: '50%' })).toThrow(/rateReference/);
  });

  it('parses sizes and rates', () => {
    expect(parseBytes('512MiB')).toBe(512 * 2 ** 20);
    expect(parseBytes('1.5GiB')).toBe(1.5 * 2 ** 30);
    expect(parseBytes(4096)).toBe(4096);
    expect(() => parseBytes('lots')).toThrow(WorkloadError);
    expect(parseRate('max', undefined)).toEqual({ kind: 'max' });
    expect(parseRate('2500', undefined)).toEqual({ kind: 'fixed', messagesPerSecond: 2500 });
    expect(parseRate('25%', 'ref')).toEqual({ kind: 'percent', percent: 25, reference: 'ref' });
  });

  it('derives records per batch and applies overrides', () => {
    const w = parseWorkload({ name: 'w', recordSize: 1000, batchBytes: 16384 });
    expect(recordsPerBatch(w)).toBe(16);
    expect(applyOverrides(w, { durationSeconds: 5, producers: undefined }).durationSeconds).toBe(5);
    expect(applyOverrides(w, { durationSeconds: 5, producers: undefined }).producers).toBe(w.producers);
  });
});
