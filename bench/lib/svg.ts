/**
 * A hand-rolled SVG chart (no browser, no dependency): throughput bars on the left, latency percentile
 * curves on the right.
 *
 *   ┌ title ───────────────────────────────────────────────────────────────┐
 *   │ MiB/s                              │ ms (log)                          │
 *   │ ██ ledgerline produce              │            ╱ kafka p-curve        │
 *   │ ██ kafka produce                   │      ____╱  ledgerline p-curve    │
 *   │ ▒▒ loopback limit                  │ ____/                             │
 *   │                                    │ 50%  90%  99%  99.9%  99.99% max  │
 *   └──────────────────────────────────────────────────────────────────────┘
 *
 * Percentiles are spaced by "nines" (x = log10(1 / (1 − p))), the usual way to draw latency
 * distributions, so the tail gets as much room as the median.
 */

export interface Bar {
  label: string;
  value: number;
  color: string;
  /** Drawn hatched-light: a machine limit rather than a measurement of a broker. */
  limit?: boolean;
}

export interface Curve {
  label: string;
  /** [percentile (0-100], ms]; 100 stands for the maximum. */
  points: ReadonlyArray<readonly [number, number]>;
  color: string;
  dashed?: boolean;
  /** Dotted instead (a third curve per broker: transaction commits). */
  dotted?: boolean;
}

export interface ChartInput {
  title: string;
  subtitle?: string;
  bars: readonly Bar[];
  barUnit: string;
  curves: readonly Curve[];
}

export const COLORS = {
  ledgerline: '#2b6cb0',
  kafka: '#c05621',
  /** The same brokers on a secure listener (`compare --security`). */
  ledgerlineSecure: '#90cdf4',
  kafkaSecure: '#f6ad55',
  limit: '#718096',
} as const;

const W = 1000;
const H = 480;
const PAD = 16;
const TOP = 84;
const BOTTOM = 60;
const LEFT_W = 430;

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function num(x: number): string {
  return Number.isFinite(x) ? (Math.round(x * 10) / 10).toString() : '0';
}

/** Splits text at " · " separators into lines of at most `width` characters. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const part of text.split(' · ')) {
    const next = line === '' ? part : `${line} · ${part}`;
    if (next.length > width && line !== '') {
      lines.push(line);
      line = part;
    } else {
      line = next;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** A "nice" upper bound for a linear axis: 1, 2 or 5 × 10^n at or above `max`. */
export function niceCeil(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/** Percentile to the "nines" axis; 100 (max) is drawn half a nine beyond the last finite percentile. */
export function ninesX(p: number, lastNines: number): number {
  if (p >= 100) return lastNines + 0.5;
  return Math.log10(100 / (100 - p));
}

function dash(k: Curve): string {
  return k.dotted ? ' stroke-dasharray="2 3"' : k.dashed ? ' stroke-dasharray="6 4"' : '';
}

export function renderChart(c: ChartInput): string {
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect x="0" y="0" width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${PAD}" y="24" font-size="16" font-weight="bold">${esc(c.title)}</text>`);
  if (c.subtitle) {
    wrap(c.subtitle, 150).slice(0, 2).forEach((line, i) => out.push(`<text x="${PAD}" y="${42 + i * 15}" fill="#4a5568">${esc(line)}</text>`));
  }
  out.push(...bars(c));
  out.push(...curves(c));
  out.push('</svg>');
  return out.join('\n') + '\n';
}

function bars(c: ChartInput): string[] {
  const out: string[] = [];
  const x0 = PAD + 150;
  const x1 = LEFT_W - PAD;
  const y0 = TOP + 10;
  const y1 = H - BOTTOM;
  out.push(`<text x="${PAD}" y="${TOP}" font-weight="bold">Throughput (${esc(c.barUnit)})</text>`);
  if (c.bars.length === 0) return out;
  const step = niceCeil(Math.max(...c.bars.map((b) => b.value)) / 4);
  const ticks = Math.max(1, Math.ceil(Math.max(...c.bars.map((b) => b.value)) / step));
  const max = step * ticks;
  const rowH = Math.min(34, (y1 - y0) / c.bars.length);
  const scale = (v: number): number => ((x1 - x0) * Math.max(0, v)) / max;
  for (let t = 0; t <= ticks; t++) {
    const v = step * t;
    const x = x0 + scale(v);
    out.push(`<line x1="${num(x)}" y1="${y0}" x2="${num(x)}" y2="${num(y0 + rowH * c.bars.length)}" stroke="#e2e8f0"/>`);
    out.push(`<text x="${num(x)}" y="${num(y0 + rowH * c.bars.length + 14)}" text-anchor="middle" fill="#4a5568">${num(v)}</text>`);
  }
  c.bars.forEach((b, i) => {
    const y = y0 + i * rowH;
    const h = rowH * 0.7;
    out.push(`<text x="${x0 - 6}" y="${num(y + h / 2 + 4)}" text-anchor="end">${esc(b.label)}</text>`);
    const opacity = b.limit ? ' fill-opacity="0.35" stroke-dasharray="4 2"' : '';
    out.push(`<rect x="${x0}" y="${num(y)}" width="${num(Math.max(1, scale(b.value)))}" height="${num(h)}" fill="${b.color}" stroke="${b.color}"${opacity}/>`);
    out.push(`<text x="${num(x0 + scale(b.value) + 4)}" y="${num(y + h / 2 + 4)}" fill="#1a202c">${esc(num(b.value))}</text>`);
  });
  return out;
}

function curves(c: ChartInput): string[] {
  const out: string[] = [];
  const x0 = LEFT_W + 60;
  const x1 = W - PAD - 10;
  const y0 = TOP + 10;
  const y1 = H - BOTTOM - 30;
  out.push(`<text x="${LEFT_W + PAD}" y="${TOP}" font-weight="bold">Latency by percentile (ms, log scale)</text>`);
  const pts = c.curves.flatMap((k) => k.points.filter(([, ms]) => ms > 0));
  if (pts.length === 0) {
    out.push(`<text x="${x0}" y="${(y0 + y1) / 2}" fill="#4a5568">no latency samples</text>`);
    return out;
  }
  const finite = pts.map(([p]) => p).filter((p) => p < 100);
  const lastNines = Math.ceil(Math.max(2, ...finite.map((p) => ninesX(p, 0))));
  const xmax = lastNines + 0.5;
  const lo = 10 ** Math.floor(Math.log10(Math.min(...pts.map(([, ms]) => ms))));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...pts.map(([, ms]) => ms)) * 1.0001));
  const X = (p: number): number => x0 + ((x1 - x0) * ninesX(p, lastNines)) / xmax;
  const Y = (ms: number): number => y1 - ((y1 - y0) * (Math.log10(ms) - Math.log10(lo))) / (Math.log10(hi) - Math.log10(lo) || 1);
  // Grid: decades of ms, and the nines.
  for (let d = lo; d <= hi * 1.0001; d *= 10) {
    out.push(`<line x1="${x0}" y1="${num(Y(d))}" x2="${x1}" y2="${num(Y(d))}" stroke="#e2e8f0"/>`);
    out.push(`<text x="${x0 - 6}" y="${num(Y(d) + 4)}" text-anchor="end" fill="#4a5568">${d >= 1 ? num(d) : d.toPrecision(1)}</text>`);
  }
  const ticks: Array<[number, string]> = [[50, '50%']];
  for (let n = 1; n <= lastNines; n++) ticks.push([100 - 100 / 10 ** n, `${(100 - 100 / 10 ** n).toFixed(Math.max(0, n - 2))}%`]);
  ticks.push([100, 'max']);
  for (const [p, label] of ticks) {
    out.push(`<line x1="${num(X(p))}" y1="${y0}" x2="${num(X(p))}" y2="${y1}" stroke="#edf2f7"/>`);
    out.push(`<text x="${num(X(p))}" y="${y1 + 16}" text-anchor="middle" fill="#4a5568">${label}</text>`);
  }
  out.push(`<line x1="${x0}" y1="${y1}" x2="${x1}" y2="${y1}" stroke="#a0aec0"/>`);
  out.push(`<line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y1}" stroke="#a0aec0"/>`);
  for (const k of c.curves) {
    const p = k.points.filter(([, ms]) => ms > 0);
    if (p.length === 0) continue;
    const d = p.map(([pc, ms], i) => `${i === 0 ? 'M' : 'L'}${num(X(pc))},${num(Y(ms))}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${k.color}" stroke-width="2"${dash(k)}/>`);
    for (const [pc, ms] of p) out.push(`<circle cx="${num(X(pc))}" cy="${num(Y(ms))}" r="2.5" fill="${k.color}"/>`);
  }
  // Legend under the axis, wrapping onto a second row.
  let lx = x0;
  let ly = H - 22;
  for (const k of c.curves) {
    const w = 36 + k.label.length * 7;
    if (lx + w > x1 && lx > x0) {
      lx = x0;
      ly += 16;
    }
    out.push(`<line x1="${lx}" y1="${ly - 4}" x2="${lx + 22}" y2="${ly - 4}" stroke="${k.color}" stroke-width="2"${dash(k)}/>`);
    out.push(`<text x="${lx + 26}" y="${ly}">${esc(k.label)}</text>`);
    lx += w;
  }
  return out;
}
