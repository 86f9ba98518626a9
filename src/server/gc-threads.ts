/**
 * How many threads V8 gets for a broker's background work (concurrent marking, sweeping, compaction jobs).
 *
 * Node.js gives V8 a pool of 4 worker threads whatever the machine. On a machine with 4 cores or fewer those
 * threads outnumber the cores the broker has beside its event loop, and they run in bursts, around every
 * full collection: the event loop, the libuv threads that write and fdatasync the ledger, and V8's workers
 * then contend for the same cores, and the collection's own pause waits on workers that are not running.
 * `--v8-pool-size=0` lets Node size the pool from the machine instead (available parallelism - 1, at least 1).
 *
 * Measured on 2 cores at half the produce rate (1-topic-16-partitions-1kb at 104,496 msg/s against a broker
 * started alone, 20 s after 5 s of warm-up), 2 alternating pairs against an explicit `--v8-pool-size=4`:
 * produce p99 12.6, 11.4 ms against 22.1, 20.1 (and 13.0-14.3 ms in 6 runs of 7 while trying pool sizes by
 * hand, one run stalled at 108 ms with the disk, against 21.1-27.1 ms in 10 runs with Node's 4); the full
 * collections' pauses 3.4-6.1 ms instead of 4.6-14.2; the broker's CPU within the runs' spread. At full
 * rate, 2 alternating pairs: 490, 480 MiB/s against 489, 465, produce p99 25 ms against 31-33, CPU per byte
 * within 3%.
 *
 * The pool is made as Node starts, before any JavaScript runs, so `ledgerline start` executes itself again
 * with the option (process.execve: the same process id and descriptors, nothing opened yet). It does not when
 * the option was given (on the command line or in NODE_OPTIONS), when the machine has more than 4 cores
 * (Node's pool then leaves a core free already), or when this Node.js has no process.execve (before 22.15).
 */
import { availableParallelism } from 'node:os';

export const V8_POOL_FLAG = '--v8-pool-size';
/** Node's own pool size when the option is not given. */
export const NODE_DEFAULT_V8_POOL = 4;

/**
 * The node arguments a broker should run with, or null when those it has will do: `execArgv` with
 * `--v8-pool-size=0` added, unless the option is in `execArgv` or `nodeOptions` or `cores` exceeds Node's pool.
 */
export function brokerExecArgv(execArgv: readonly string[], nodeOptions: string | undefined, cores: number): string[] | null {
  const given = (arg: string): boolean => arg.replaceAll('_', '-').split('=')[0] === V8_POOL_FLAG;
  if (execArgv.some(given) || (nodeOptions ?? '').split(/\s+/).some(given)) return null;
  if (cores > NODE_DEFAULT_V8_POOL) return null;
  return [...execArgv, `${V8_POOL_FLAG}=0`];
}

/**
 * Executes this process again with the broker's node arguments when it lacks them (see above); returns only
 * when it does not (the arguments are right, or this platform or Node.js cannot), with the reason.
 */
export function reexecWithBrokerThreads(): string {
  const execArgv = brokerExecArgv(process.execArgv, process.env.NODE_OPTIONS, availableParallelism());
  if (execArgv === null) return 'kept';
  const execve = (process as { execve?: (file: string, args: string[], env: NodeJS.ProcessEnv) => never }).execve;
  if (typeof execve !== 'function') return 'process.execve is not available';
  try {
    return execve.call(process, process.execPath, [process.execPath, ...execArgv, ...process.argv.slice(1)], process.env);
  } catch (err) {
    return `process.execve failed: ${(err as Error).message}`;
  }
}
