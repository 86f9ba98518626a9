/**
 * Emptying the kernel's page cache, for catch-up reads of a backlog that is not in memory (`compare --cold-read`):
 * what a consumer sees when it reads a backlog larger than the page cache, without writing tens of GiB first.
 *
 *   sync(1)                           dirty pages written back, so they can be dropped
 *   echo 1 > /proc/sys/vm/drop_caches clean page-cache pages dropped (Linux, root only; `1` keeps dentries/inodes)
 *
 * Only the kernel's cache goes: what a broker keeps in its own memory stays (the embedded store's tail cache of the newest
 * entries, 64 MiB: src/ledger/tail-cache.ts; Kafka keeps no record data on its heap), as it would with a larger
 * backlog.
 */
import { execFile } from 'node:child_process';
import { access, constants, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const DROP_CACHES = '/proc/sys/vm/drop_caches';

/** Why the page cache cannot be dropped here, or null when it can. */
export async function pageCacheDropUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return `dropping the page cache needs Linux (this is ${process.platform})`;
  try {
    await access(DROP_CACHES, constants.W_OK);
  } catch (e) {
    return `${DROP_CACHES} is not writable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): run as root, outside a read-only /proc`;
  }
  return null;
}

/** Writes dirty pages back, then drops the clean ones; resolves with the seconds it took. */
export async function dropPageCache(): Promise<number> {
  const t0 = performance.now();
  await promisify(execFile)('sync');
  await writeFile(DROP_CACHES, '1\n');
  return (performance.now() - t0) / 1000;
}
