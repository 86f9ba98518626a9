/**
 * Reads from bookies, as BookKeeper's PendingReadOp and ReadLastConfirmedOp do.
 *
 * An entry is read from the bookies of its write set in the schedule's order: the first is asked; when it has
 * not answered within the speculative timeout (BookKeeper's speculativeReadTimeout) the next is asked too, and
 * an error (a lost connection, no such entry, a digest that does not match) moves on at once. The first
 * answer whose digest checks wins; bytes that fail their digest are never returned. When every replica
 * failed and one of them sent bytes that did not check, the read fails with LL_ERR_LEDGER_CORRUPT.
 *
 * The last add confirmed of a ledger another writer holds open is the highest LAC the bookies of its last
 * ensemble know: the one piggybacked in their last entry, or the explicit LAC a writer sent (WriteLac), once
 * enough of them answered to cover every write set.
 */
import { BookieClientPool, RC_TIMEOUT, StatusCode } from './bookie-client.js';
import { DigestMismatchError, type DigestManager, type UnpackedEntry } from './digest.js';
import { ensembleFor, type BkLedgerMetadata } from './metadata.js';
import { covered, writeSet } from './schedule.js';

export interface ReadContext {
  readonly pool: BookieClientPool;
  readonly readTimeoutMs: number;
  readonly speculativeReadTimeoutMs: number;
}

/** Why a read of one entry failed on every replica. */
export class EntryReadError extends Error {
  constructor(
    message: string,
    /** Some replica sent bytes whose digest did not match. */
    readonly corrupt: boolean,
    /** Every replica said the entry (or ledger) does not exist. */
    readonly missing: boolean,
  ) {
    super(message);
  }
}

/** Reads one entry from the replicas of its write set, with speculative retry and failover. */
export function readEntry(ctx: ReadContext, ledgerId: number, meta: BkLedgerMetadata, digest: DigestManager, entryId: number): Promise<UnpackedEntry> {
  const seg = ensembleFor(meta, entryId);
  const order = writeSet(entryId, meta.ensembleSize, meta.writeQuorumSize).map((i) => seg.bookies[i]);
  return new Promise<UnpackedEntry>((resolve, reject) => {
    let next = 0;
    let outstanding = 0;
    let done = false;
    let corrupt = false;
    let missing = 0;
    const errors: string[] = [];
    let timer: NodeJS.Timeout | null = null;
    const finishIfExhausted = (): void => {
      if (done || outstanding > 0 || next < order.length) return;
      done = true;
      reject(new EntryReadError(`entry ${entryId} of ledger ${ledgerId} could not be read from ${order.join(', ')}: ${errors.join('; ')}`, corrupt, missing === order.length));
    };
    const send = (): void => {
      if (done || next >= order.length) return;
      const bookie = order[next++];
      outstanding++;
      if (timer) clearTimeout(timer);
      timer = next < order.length && ctx.speculativeReadTimeoutMs > 0 ? setTimeout(send, ctx.speculativeReadTimeoutMs) : null;
      void ctx.pool
        .get(bookie)
        .read(ledgerId, entryId, { timeoutMs: ctx.readTimeoutMs })
        .then((res) => {
          outstanding--;
          if (done) return;
          if (res.rc === StatusCode.EOK && res.body) {
            try {
              const entry = digest.unpack(ledgerId, res.body, entryId);
              done = true;
              if (timer) clearTimeout(timer);
              resolve(entry);
              return;
            } catch (err) {
              if (!(err instanceof DigestMismatchError)) throw err;
              corrupt = true;
              errors.push(`${bookie}: ${err.message}`);
            }
          } else {
            if (res.rc === StatusCode.ENOENTRY || res.rc === StatusCode.ENOLEDGER) missing++;
            errors.push(`${bookie}: ${rcName(res.rc)}`);
          }
          send();
          finishIfExhausted();
        });
    };
    send();
  });
}

/** A name for a status code in messages. */
export function rcName(rc: number): string {
  if (rc === RC_TIMEOUT) return 'timeout';
  if (rc < 0) return ['', 'connection failed', 'timeout', 'bad response', 'client closed'][-rc] ?? `rc ${rc}`;
  return StatusCode[rc] ?? `status ${rc}`;
}

/** What the bookies of a ledger's last ensemble say of its tail (ReadLastConfirmedOp's RecoveryData). */
export interface TailInfo {
  /** The highest LAC known to them (piggybacked or explicit); -1 when none. */
  readonly lastAddConfirmed: number;
  /** The highest entry id any of them holds (may be above the LAC: not necessarily on a quorum). */
  readonly lastEntryId: number;
}

/**
 * Asks every bookie of the last ensemble for its last entry (and explicit LAC), until the answers cover every
 * write set (RoundRobinDistributionSchedule.checkCovered). With `fence`, the reads carry FENCE_LEDGER and the
 * master key: each bookie that answers refuses the old writer's adds from then on (LedgerRecoveryOp's first
 * step). Rejects when the answers cannot cover the ensemble.
 */
export function readTail(
  ctx: ReadContext,
  ledgerId: number,
  meta: BkLedgerMetadata,
  digest: DigestManager,
  opts: { fence?: boolean; masterKey?: Uint8Array } = {},
): Promise<TailInfo> {
  const seg = meta.ensembles[meta.ensembles.length - 1];
  const n = seg.bookies.length;
  return new Promise<TailInfo>((resolve, reject) => {
    const answered = new Array<boolean>(n).fill(false);
    let responses = 0;
    let lac = -1;
    let last = -1;
    let done = false;
    const errors: string[] = [];
    const onAnswer = (): void => {
      if (done) return;
      if (covered(answered, meta.ensembleSize, meta.writeQuorumSize, meta.ackQuorumSize)) {
        done = true;
        resolve({ lastAddConfirmed: lac, lastEntryId: last });
      } else if (responses === n) {
        done = true;
        reject(new EntryReadError(`the last add confirmed of ledger ${ledgerId} could not be read from enough of ${seg.bookies.join(', ')}: ${errors.join('; ')}`, false, false));
      }
    };
    seg.bookies.forEach((bookie, i) => {
      const client = ctx.pool.get(bookie);
      const take = (body: Buffer | undefined): void => {
        if (!body) return;
        const e = digest.unpack(ledgerId, body);
        lac = Math.max(lac, e.lastAddConfirmed);
        last = Math.max(last, e.entryId);
      };
      const op = opts.fence
        ? client.read(ledgerId, -1n, { fence: true, masterKey: opts.masterKey, timeoutMs: ctx.readTimeoutMs }).then((r) => {
            if (r.rc === StatusCode.EOK) take(r.body);
            return r.rc;
          })
        : client.readLac(ledgerId, ctx.readTimeoutMs).then((r) => {
            if (r.rc === StatusCode.EOK) {
              take(r.lastEntryBody);
              if (r.lacBody) lac = Math.max(lac, digest.unpackLac(ledgerId, r.lacBody));
            }
            return r.rc;
          });
      op.then(
        (rc) => {
          responses++;
          if (rc === StatusCode.EOK || rc === StatusCode.ENOENTRY || rc === StatusCode.ENOLEDGER) answered[i] = true;
          else errors.push(`${bookie}: ${rcName(rc)}`);
          onAnswer();
        },
        (err: Error) => {
          responses++;
          errors.push(`${bookie}: ${err.message}`);
          onAnswer();
        },
      );
    });
  });
}
