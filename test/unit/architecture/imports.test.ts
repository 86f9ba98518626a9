/**
 * The layering rules of ARCHITECTURE.md, checked on the source: each layer knows only the ones below it.
 * Every import counts, `import type` included: a type-only cycle still ties the files' designs together.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../../..');
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const IMPORT = /^\s*(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'/gm;

/** Relative imports of each file under src/, as paths relative to the project root. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8');
    const deps: string[] = [];
    for (const m of text.matchAll(IMPORT)) deps.push(relative(ROOT, resolve(dirname(file), m[1]!.replace(/\.js$/, '.ts'))));
    graph.set(relative(ROOT, file), deps);
  }
  return graph;
}

/** Tarjan's strongly connected components: every set of files that import each other, directly or not. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) visit(v);
  return out;
}

describe('source layering', () => {
  const graph = importGraph();

  it('reads the import graph of src/', () => {
    expect(graph.size).toBeGreaterThan(50);
    expect(graph.get('src/server/broker.ts')).toContain('src/server/dispatch.ts');
  });

  it('has no import from src/api/ to src/server/: handlers get services, never the broker', () => {
    const offending = [...graph].flatMap(([file, deps]) => (file.startsWith('src/api/') ? deps.filter((d) => d.startsWith('src/server/')).map((d) => `${file} -> ${d}`) : []));
    expect(offending).toEqual([]);
  });

  it('has no import cycle longer than two files', () => {
    expect(cycles(graph).filter((c) => c.length > 2)).toEqual([]);
  });

  it('names LocalLedgerStore nowhere above src/ledger/: the store is chosen by configuration and passed as its interface', () => {
    const offending = [...graph.keys()].filter((f) => !f.startsWith('src/ledger/') && /\bLocalLedgerStore\b/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(offending).toEqual([]);
  });
});
