/**
 * BkTool (compat/bookkeeper) and BookieShell from TypeScript: BookKeeper's own client and tools, for tests that
 * check what another client wrote is a BookKeeper ledger as BookKeeper itself reads it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classpathOrThrow } from './classpath.js';
import { runJava } from './process.js';

/** A line of `list` and the object of `meta`. */
export interface BkLedgerMetadata {
  ledgerId: number;
  state: 'OPEN' | 'IN_RECOVERY' | 'CLOSED';
  lastEntryId: number;
  length: number;
  ensembleSize: number;
  writeQuorumSize: number;
  ackQuorumSize: number;
  digestType: 'CRC32' | 'MAC' | 'CRC32C' | 'DUMMY';
  hasPassword: boolean;
  ctime: number;
  metadataFormatVersion: number;
  /** The ensemble of the last segment. */
  ensemble: string[];
  /** Every segment's ensemble by its first entry id. */
  ensembles: Record<string, string[]>;
  /** Values decoded as UTF-8 (null when they are not text). */
  customMetadata: Record<string, string | null>;
  customMetadataHex: Record<string, string>;
}

/** A line of `read`: hex by default, base64 with --base64. */
export interface BkEntry {
  entryId: number;
  length: number;
  hex?: string;
  base64?: string;
}

export interface BkToolOptions {
  metadataServiceUri: string;
  /** The ledger password (default empty). */
  password?: string;
  /** crc32c, crc32, mac or dummy; by default the ledger's own (from its metadata). */
  digest?: string;
  timeoutMs?: number;
}

/**
 * Runs BkTool with `args` (e.g. ['list'], ['read', '7', '--recovery'], ['meta', '7'],
 * ['write', '--entries', '5']) and returns its stdout's JSON lines, parsed. Throws with BkTool's error
 * ({"error","code","message"} on stderr) when it exits non-zero.
 */
export async function bkTool<T = Record<string, unknown>>(args: readonly string[], opts: BkToolOptions): Promise<T[]> {
  const extra = [
    '--metadata-service-uri',
    opts.metadataServiceUri,
    ...(opts.password !== undefined ? ['--password', opts.password] : []),
    ...(opts.digest !== undefined ? ['--digest', opts.digest] : []),
  ];
  const r = await runJava(classpathOrThrow(), 'dev.ledgerline.compat.bookkeeper.BkTool', [...extra, ...args], opts.timeoutMs ?? 120_000, [
    '-Dledgerline.log.level=WARN',
  ]);
  if (r.code !== 0) {
    const err = r.output.split('\n').reverse().find((l) => l.startsWith('{"error"'));
    throw new Error(`BkTool ${args.join(' ')} failed (${r.code === null ? 'timed out' : `status ${r.code}`}): ${err ?? r.output.slice(-4000)}`);
  }
  return r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as T);
}

/** The entries' bytes of a `read`. */
export function entryBytes(e: BkEntry): Buffer {
  return e.hex !== undefined ? Buffer.from(e.hex, 'hex') : Buffer.from(e.base64 ?? '', 'base64');
}

/**
 * Runs BookKeeper's shell (org.apache.bookkeeper.bookie.BookieShell) with a configuration naming the cluster:
 * e.g. ['simpletest', '-ensemble', '3', '-writeQuorum', '2', '-ackQuorum', '2', '-numEntries', '100'].
 * Returns its exit status and output (stdout and stderr).
 */
export async function bookieShell(args: readonly string[], opts: { metadataServiceUri: string; timeoutMs?: number }): Promise<{ code: number | null; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgerline-bkshell-'));
  const conf = join(dir, 'bk_shell.conf');
  writeFileSync(conf, `metadataServiceUri=${opts.metadataServiceUri}\nzkTimeout=10000\n`);
  try {
    const r = await runJava(classpathOrThrow(), 'org.apache.bookkeeper.bookie.BookieShell', ['-conf', conf, ...args], opts.timeoutMs ?? 120_000);
    return { code: r.code, output: r.output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
