/**
 * Emptying the kernel's page cache before the disk's read limit is measured (`compare --disk-read-limit`,
 * limits.ts), so the file written just before is read from the disk:
 *
 *   sync(1)                           dirty pages written back, so they can be dropped
 *   echo 1 > /proc/sys/vm/drop_caches clean page-cache pages dropped (Linux, root only; `1` keeps dentries/inodes)
 *
 * Not between a catch-up run's write and its read: that drops every page of the machine, a broker's memory-mapped
 * files with them (Kafka's offset and time indexes), where a backlog larger than the page cache leaves what was
 * used last in memory, so it is not the same read (Kafka read 393 MiB/s after a drop, 741 MiB/s from a 32 GiB
 * backlog on the same disk). A catch-up read from the disk is measured with a backlog larger than the machine's
 * memory (`--backlog 32GiB` on 24 GiB).
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

/** Writes dirty pages back, then drops the clean ones. */
export async function dropPageCache(): Promise<void> {
  await promisify(execFile)('sync');
  await writeFile(DROP_CACHES, '1\n');
}
