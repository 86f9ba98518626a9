/**
 * Recovery-open of a ledger, as BookKeeper's client does it (LedgerRecoveryOp), so that a writer elsewhere —
 * a zombie broker — can never append again and every entry it had acknowledged is kept:
 *
 * ```
 *   1. metadata OPEN ─CAS─► IN_RECOVERY            (CLOSED already: done, nothing changes)
 *   2. fencing LAC reads (FENCE_LEDGER + master key) to the last ensemble, until they cover every write set:
 *        each bookie that answered refuses the old writer's adds with EFENCED from then on; no entry can
 *        reach Qa acks any more, and every entry that did is known to one of them
 *   3. lac = max(the LACs they report, first entry of the last ensemble - 1)
 *   4. recovery reads forward from lac + 1 (fencing reads to the entry's write set):
 *        found on one replica  ─► re-added to its write set with RECOVERY_ADD (allowed on a fenced ledger),
 *                                 until Qa acks
 *        missing on ≥ Qw-Qa+1 ─► it never reached an ack quorum: the end
 *   5. metadata ─CAS─► CLOSED, lastEntryId = last recovered entry, length = its header's length
 * ```
 */
import { LedgerStorageError, NoSuchLedgerError } from '../errors.js';
import type { LedgerId } from '../types.js';
import { StatusCode, type BookieClientPool } from './bookie-client.js';
import { DigestManager, DigestMismatchError } from './digest.js';
import { MetadataConflictError, type VersionedMetadata, type ZkLedgerManager } from './ledger-manager.js';
import type { BkLedgerMetadata } from './metadata.js';
import { readEntry, readTail, rcName, type ReadContext } from './reader.js';
import { writeSet } from './schedule.js';

export interface RecoveryContext extends ReadContext {
  readonly pool: BookieClientPool;
  readonly manager: ZkLedgerManager;
  readonly addTimeoutMs: number;
  readonly masterKeyOf: (m: BkLedgerMetadata) => Buffer;
  readonly digestOf: (m: BkLedgerMetadata) => DigestManager;
  log(msg: string, fields?: Record<string, unknown>): void;
}

/** Recovers and closes `ledgerId`; resolves with the CLOSED metadata (unchanged if it was closed already). */
export async function recoverLedger(ctx: RecoveryContext, ledgerId: LedgerId, extraCustom?: ReadonlyMap<string, Uint8Array>): Promise<VersionedMetadata> {
  let vm = await ctx.manager.read(ledgerId);
  // 1. OPEN → IN_RECOVERY (an IN_RECOVERY ledger is recovered again: its recoverer may have died).
  for (;;) {
    if (!vm) throw new NoSuchLedgerError(ledgerId);
    if (vm.metadata.state === 'CLOSED') return vm;
    if (vm.metadata.state === 'IN_RECOVERY') break;
    try {
      vm = await ctx.manager.write(ledgerId, { ...vm.metadata, state: 'IN_RECOVERY' }, vm.version);
      break;
    } catch (err) {
      if (!(err instanceof MetadataConflictError)) throw err;
      vm = err.current;
    }
  }
  const m = vm.metadata;
  const digest = ctx.digestOf(m);
  const key = ctx.masterKeyOf(m);
  const lastSeg = m.ensembles[m.ensembles.length - 1];
  // 2, 3. Fence the last ensemble and learn its LAC.
  let tail;
  try {
    tail = await readTail(ctx, ledgerId, m, digest, { fence: true, masterKey: key });
  } catch (err) {
    throw new LedgerStorageError(`ledger ${ledgerId} could not be fenced: ${(err as Error).message}`, { ledgerId }, err);
  }
  let last = Math.max(tail.lastAddConfirmed, lastSeg.firstEntryId - 1);
  let length = 0;
  if (last >= 0) length = (await readOrFail(ctx, ledgerId, m, digest, last)).length;
  // 4. Forward: re-add every entry that may have been acknowledged.
  for (;;) {
    const e = last + 1;
    const found = await recoveryRead(ctx, ledgerId, m, digest, key, e);
    if (found === null) break;
    const lengthAfter = length + found.payload.length;
    const packet = Buffer.concat([digest.packHeader(ledgerId, e, last, lengthAfter, found.payload), found.payload]);
    await recoveryAdd(ctx, ledgerId, m, key, e, packet);
    last = e;
    length = lengthAfter;
  }
  // 5. Close.
  for (;;) {
    const custom = new Map(vm.metadata.customMetadata);
    for (const [k, v] of extraCustom ?? []) custom.set(k, v);
    const closed: BkLedgerMetadata = { ...vm.metadata, state: 'CLOSED', lastEntryId: last, length, customMetadata: custom };
    try {
      const done = await ctx.manager.write(ledgerId, closed, vm.version);
      ctx.log('ledger recovered and closed', { ledgerId, lastEntryId: last, length });
      return done;
    } catch (err) {
      if (!(err instanceof MetadataConflictError)) throw err;
      if (!err.current) throw new NoSuchLedgerError(ledgerId);
      if (err.current.metadata.state === 'CLOSED') return err.current; // another recoverer finished first
      vm = err.current;
    }
  }
}

async function readOrFail(ctx: ReadContext, ledgerId: number, m: BkLedgerMetadata, digest: DigestManager, entryId: number) {
  try {
    return await readEntry(ctx, ledgerId, m, digest, entryId);
  } catch (err) {
    throw new LedgerStorageError(`ledger ${ledgerId}: entry ${entryId} could not be read during recovery: ${(err as Error).message}`, { ledgerId, entryId }, err);
  }
}

/**
 * A recovery read of one entry (fencing reads to its whole write set): the entry when a replica has it, null
 * when enough replicas (Qw - Qa + 1) say it does not exist that it cannot have been acknowledged.
 */
function recoveryRead(ctx: RecoveryContext, ledgerId: number, m: BkLedgerMetadata, digest: DigestManager, key: Buffer, entryId: number) {
  const seg = m.ensembles[m.ensembles.length - 1];
  const bookies = writeSet(entryId, m.ensembleSize, m.writeQuorumSize).map((i) => seg.bookies[i]);
  const maxMissing = m.writeQuorumSize - m.ackQuorumSize;
  return new Promise<{ payload: Buffer; length: number } | null>((resolve, reject) => {
    let missing = 0;
    let answers = 0;
    let done = false;
    const errors: string[] = [];
    for (const bookie of bookies) {
      void ctx.pool
        .get(bookie)
        .read(ledgerId, entryId, { fence: true, masterKey: key, timeoutMs: ctx.readTimeoutMs })
        .then((r) => {
          answers++;
          if (done) return;
          if (r.rc === StatusCode.EOK && r.body) {
            try {
              const e = digest.unpack(ledgerId, r.body, entryId);
              done = true;
              resolve({ payload: Buffer.from(e.payload), length: e.length });
              return;
            } catch (err) {
              if (!(err instanceof DigestMismatchError)) throw err;
              errors.push(`${bookie}: ${err.message}`);
            }
          } else if (r.rc === StatusCode.ENOENTRY || r.rc === StatusCode.ENOLEDGER) {
            missing++;
            if (missing > maxMissing) {
              done = true;
              resolve(null);
              return;
            }
          } else {
            errors.push(`${bookie}: ${rcName(r.rc)}`);
          }
          if (answers === bookies.length) {
            done = true;
            reject(new LedgerStorageError(`ledger ${ledgerId}: recovery could not tell whether entry ${entryId} exists: ${errors.join('; ')}`, { ledgerId, entryId }, undefined));
          }
        });
    }
  });
}

/** Re-adds a recovered entry with RECOVERY_ADD to its write set; resolves after Qa acks. */
function recoveryAdd(ctx: RecoveryContext, ledgerId: number, m: BkLedgerMetadata, key: Buffer, entryId: number, packet: Buffer): Promise<void> {
  const seg = m.ensembles[m.ensembles.length - 1];
  const bookies = writeSet(entryId, m.ensembleSize, m.writeQuorumSize).map((i) => seg.bookies[i]);
  return new Promise<void>((resolve, reject) => {
    let acks = 0;
    let answers = 0;
    let done = false;
    const errors: string[] = [];
    for (const bookie of bookies) {
      void ctx.pool
        .get(bookie)
        .add(ledgerId, entryId, key, packet, { recovery: true, timeoutMs: ctx.addTimeoutMs })
        .then((rc) => {
          answers++;
          if (done) return;
          if (rc === StatusCode.EOK) acks++;
          else errors.push(`${bookie}: ${rcName(rc)}`);
          if (acks >= m.ackQuorumSize) {
            done = true;
            resolve();
          } else if (answers === bookies.length) {
            done = true;
            reject(new LedgerStorageError(`ledger ${ledgerId}: recovered entry ${entryId} reached ${acks} of ${m.ackQuorumSize} bookies: ${errors.join('; ')}`, { ledgerId, entryId }, undefined));
          }
        });
    }
  });
}
