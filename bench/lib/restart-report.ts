/**
 * The figures the restart benchmarks (partitions.ts, restart.ts) collect per broker, and their table: each
 * figure's median with its spread (min–max over the samples), its goal when it has one, and the
 * Ledgerline ÷ Kafka ratio of the medians.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrokerKind } from './brokers.js';
import { formatSpread, ratio, spread, type Spread, type Unit } from './settle.js';
import { RESULTS_DIR } from './workload.js';

export interface Figure {
  key: string;
  label: string;
  unit: Unit;
  /** The goal as an upper bound in the figure's raw unit (ms or MiB), with how it reads. */
  goal?: { max: number; text: string };
}

/** Raw samples per figure key (ms or MiB), per broker. */
export type Samples = Record<string, number[]>;

export interface BrokerOutcome {
  kind: BrokerKind;
  samples: Samples;
  /** Why the broker's run stopped early, or null. */
  error: string | null;
  notes: string[];
}

export function push(s: Samples, key: string, v: number): void {
  (s[key] ??= []).push(v);
}

/** The Markdown table: one row per figure, a column per broker, the goal and the ratio. */
export function figureTable(figures: readonly Figure[], outcomes: readonly BrokerOutcome[]): string {
  const by = (kind: BrokerKind): BrokerOutcome | undefined => outcomes.find((o) => o.kind === kind);
  const kinds = outcomes.map((o) => o.kind);
  const lines = [
    `| figure | goal | ${kinds.join(' | ')} |${kinds.length === 2 ? ' ledgerline ÷ kafka |' : ''}`,
    `|---|---|${kinds.map(() => '---:|').join('')}${kinds.length === 2 ? '---:|' : ''}`,
  ];
  for (const f of figures) {
    const cells = kinds.map((k) => {
      const s = spread(by(k)?.samples[f.key] ?? []);
      return `${formatSpread(s, f.unit)}${verdict(s, f)}`;
    });
    const r = kinds.length === 2 ? ` ${ratio(spread(by('ledgerline')?.samples[f.key] ?? []), spread(by('kafka')?.samples[f.key] ?? []))} |` : '';
    lines.push(`| ${f.label} | ${f.goal?.text ?? '–'} | ${cells.join(' | ')} |${r}`);
  }
  return lines.join('\n');
}

/** One line on how loaded the machine was before the run: the figures mean little without it. */
export function loadLine(load: readonly number[], cpus: number): string {
  return `Load average (1, 5, 15 min) before the run: ${load.map((x) => x.toFixed(1)).join(', ')} on ${cpus} CPUs.`;
}

function verdict(s: Spread | null, f: Figure): string {
  if (s === null || !f.goal) return '';
  return s.median < f.goal.max ? ' ✓' : ' ✗';
}

export function outcomeLines(outcomes: readonly BrokerOutcome[]): string[] {
  const out: string[] = [];
  for (const o of outcomes) {
    if (o.error) out.push(`- ${o.kind}: stopped early: ${o.error}`);
    for (const n of o.notes) out.push(`- ${o.kind}: ${n}`);
  }
  return out;
}

/** Writes the run's JSON under bench/results/ and returns its path. */
export function writeJson(id: string, content: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${id}.json`);
  writeFileSync(path, JSON.stringify(content, null, 2) + '\n');
  return path;
}
