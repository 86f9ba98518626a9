import { describe, expect, it } from 'vitest';
import { figureTable, loadLine, outcomeLines } from '../../../../bench/lib/restart-report.js';
import type { BrokerOutcome, Figure } from '../../../../bench/lib/restart-report.js';

const figures: Figure[] = [
  { key: 'listen', label: 'time to listen', unit: 's', goal: { max: 5000, text: '< 5 s' } },
  { key: 'rss', label: 'idle RSS', unit: 'MiB', goal: { max: 1024, text: '< 1 GiB' } },
];

describe('restart benchmark table', () => {
  it('shows each broker against the goal and the Ledgerline ÷ Kafka ratio of the medians', () => {
    const outcomes: BrokerOutcome[] = [
      { kind: 'ledgerline', samples: { listen: [1000, 2000, 3000], rss: [300] }, error: null, notes: [] },
      { kind: 'kafka', samples: { listen: [8000], rss: [900] }, error: null, notes: [] },
    ];
    const table = figureTable(figures, outcomes).split('\n');
    expect(table[0]).toBe('| figure | goal | ledgerline | kafka | ledgerline ÷ kafka |');
    expect(table[2]).toBe('| time to listen | < 5 s | 2.00 s (1.00–3.00, n=3) ✓ | 8.00 s ✗ | 0.25× |');
    expect(table[3]).toBe('| idle RSS | < 1 GiB | 300 MiB ✓ | 900 MiB ✓ | 0.33× |');
  });

  it('has no ratio column with one broker, and a dash where a broker has no sample', () => {
    const table = figureTable(figures, [{ kind: 'kafka', samples: {}, error: 'exited', notes: [] }]).split('\n');
    expect(table[0]).toBe('| figure | goal | kafka |');
    expect(table[2]).toBe('| time to listen | < 5 s | – |');
  });

  it('lists why a broker stopped early and its notes', () => {
    expect(outcomeLines([{ kind: 'kafka', samples: {}, error: 'did not answer', notes: ['RSS had not settled'] }])).toEqual([
      '- kafka: stopped early: did not answer',
      '- kafka: RSS had not settled',
    ]);
    expect(loadLine([7.25, 3, 1], 2)).toBe('Load average (1, 5, 15 min) before the run: 7.3, 3.0, 1.0 on 2 CPUs.');
  });
});
