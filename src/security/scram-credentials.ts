/**
 * SCRAM credentials in the metadata store, as Kafka keeps them in its metadata log (KRaft's
 * UserScramCredentialRecord / RemoveUserScramCredentialRecord, ScramControlManager): per user and mechanism the
 * salt, StoredKey, ServerKey and iteration count (RFC 5802), never the password. Every broker on the store reads
 * the same record at authentication, so a credential altered through any broker works on all of them at once.
 *
 *   /users/<user, percent-encoded>
 *     {"formatVersion":1,"scram":{"SCRAM-SHA-512":{"salt":"<b64>","storedKey":"<b64>","serverKey":"<b64>","iterations":8192}}}
 *
 * `alter` applies AlterUserScramCredentials with ScramControlManager's rules and messages: a user named twice in
 * one request (deletions and upsertions together) is DUPLICATE_RESOURCE, an empty name UNACCEPTABLE_CREDENTIAL,
 * an unknown mechanism UNSUPPORTED_SASL_MECHANISM, iterations outside [4096, 16384] UNACCEPTABLE_CREDENTIAL,
 * deleting a credential that does not exist RESOURCE_NOT_FOUND. The request carries the salted password
 * (Hi(password, salt, i)); StoredKey and ServerKey are derived from it here, as Kafka's controller derives them.
 * Each user's record is changed by compare-and-set; Kafka applies one request atomically across users, here
 * each user's change is atomic on its own.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { segment, parseSegment } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';
import { listAll } from '../metadata/list-all.js';
import { MAX_SCRAM_ITERATIONS, MIN_SCRAM_ITERATIONS, scramCredentialFromSaltedPassword, type ScramCredential, type ScramMechanismName } from './sasl/scram.js';

export const USERS_PREFIX = '/users/';

/** Kafka's ScramMechanism types, as DescribeUserScramCredentials and AlterUserScramCredentials number them. */
export const SCRAM_MECHANISM_TYPES: ReadonlyMap<number, ScramMechanismName> = new Map([
  [1, 'SCRAM-SHA-256'],
  [2, 'SCRAM-SHA-512'],
]);
const TYPE_OF: ReadonlyMap<ScramMechanismName, number> = new Map([...SCRAM_MECHANISM_TYPES].map(([t, n]) => [n, t]));

interface StoredCredential {
  readonly salt: string;
  readonly storedKey: string;
  readonly serverKey: string;
  readonly iterations: number;
}

interface StoredUser {
  readonly formatVersion: 1;
  readonly scram: Partial<Record<ScramMechanismName, StoredCredential>>;
}

export interface UserResult {
  readonly user: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface DescribedUser extends UserResult {
  /** Mechanism type (1: SCRAM-SHA-256, 2: SCRAM-SHA-512) and iterations of each credential. */
  readonly credentials: readonly { readonly mechanism: number; readonly iterations: number }[];
}

export interface Deletion {
  readonly name: string;
  readonly mechanism: number;
}

export interface Upsertion extends Deletion {
  readonly iterations: number;
  readonly salt: Uint8Array;
  readonly saltedPassword: Uint8Array;
}

const DUPLICATE_ALTER = 'A user credential cannot be altered twice in the same request';

export class ScramCredentialStore {
  constructor(private readonly store: MetadataStore) {}

  /** The credential of `user` for `mechanism`, or undefined: what a SCRAM exchange verifies against. */
  async credential(user: string, mechanism: ScramMechanismName): Promise<ScramCredential | undefined> {
    if (user.length === 0) return undefined;
    const kv = await this.store.get(userKey(user));
    const c = kv ? decode(kv.value).scram[mechanism] : undefined;
    if (!c) return undefined;
    return { salt: Buffer.from(c.salt, 'base64'), storedKey: Buffer.from(c.storedKey, 'base64'), serverKey: Buffer.from(c.serverKey, 'base64'), iterations: c.iterations };
  }

  /**
   * DescribeUserScramCredentials (ScramImage.describe): every user with a credential when `users` is null or
   * empty, else each one named, a name given twice answered DUPLICATE_RESOURCE, one without credentials
   * RESOURCE_NOT_FOUND.
   */
  async describe(users: readonly string[] | null): Promise<DescribedUser[]> {
    const all = new Map<string, StoredUser>();
    const wanted = new Map<string, boolean>();
    if (users === null || users.length === 0) {
      for (const kv of await listAll(this.store, USERS_PREFIX)) {
        const name = parseSegment(kv.key.slice(USERS_PREFIX.length));
        all.set(name, decode(kv.value));
        wanted.set(name, false);
      }
    } else {
      for (const u of users) wanted.set(u, wanted.has(u));
      await Promise.all(
        [...wanted].map(async ([u, duplicate]) => {
          if (duplicate || u.length === 0) return;
          const kv = await this.store.get(userKey(u));
          if (kv) all.set(u, decode(kv.value));
        }),
      );
    }
    const out: DescribedUser[] = [];
    for (const [user, duplicate] of wanted) {
      if (duplicate) {
        out.push({ user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentials: [] });
        continue;
      }
      const stored = all.get(user);
      const credentials = stored ? [...TYPE_OF].flatMap(([name, mechanism]) => (stored.scram[name] ? [{ mechanism, iterations: stored.scram[name].iterations }] : [])) : [];
      if (credentials.length === 0) out.push({ user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentials: [] });
      else out.push({ user, errorCode: ErrorCode.NONE, errorMessage: null, credentials });
    }
    return out;
  }

  /** AlterUserScramCredentials with ScramControlManager.alterCredentials' validation and results. */
  async alter(deletions: readonly Deletion[], upsertions: readonly Upsertion[]): Promise<UserResult[]> {
    const errors = new Map<string, UserResult>();
    const fail = (user: string, errorCode: number, errorMessage: string | null): void => void errors.set(user, { user, errorCode, errorMessage });
    const toDelete = new Map<string, Deletion>();
    const toUpsert = new Map<string, Upsertion>();
    for (const d of deletions) {
      if (errors.has(d.name)) continue;
      if (toDelete.delete(d.name)) fail(d.name, ErrorCode.DUPLICATE_RESOURCE, DUPLICATE_ALTER);
      else {
        const refused = checkNameAndMechanism(d);
        if (refused) fail(d.name, refused.errorCode, refused.errorMessage);
        else toDelete.set(d.name, d);
      }
    }
    for (const u of upsertions) {
      if (errors.has(u.name)) continue;
      if (toDelete.delete(u.name) || toUpsert.delete(u.name)) fail(u.name, ErrorCode.DUPLICATE_RESOURCE, DUPLICATE_ALTER);
      else {
        const refused = checkNameAndMechanism(u) ?? checkIterations(u.iterations);
        if (refused) fail(u.name, refused.errorCode, refused.errorMessage);
        else toUpsert.set(u.name, u);
      }
    }
    const done: UserResult[] = [];
    for (const d of toDelete.values()) {
      const mechanism = SCRAM_MECHANISM_TYPES.get(d.mechanism)!;
      const existed = await this.update(d.name, (user) => {
        if (!user?.scram[mechanism]) return undefined;
        const scram = { ...user.scram };
        delete scram[mechanism];
        return { formatVersion: 1, scram };
      });
      if (existed) done.push({ user: d.name, errorCode: ErrorCode.NONE, errorMessage: null });
      else fail(d.name, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
    }
    for (const u of toUpsert.values()) {
      const mechanism = SCRAM_MECHANISM_TYPES.get(u.mechanism)!;
      const c = scramCredentialFromSaltedPassword(mechanism, Buffer.from(u.saltedPassword), Buffer.from(u.salt), u.iterations);
      const stored: StoredCredential = { salt: c.salt.toString('base64'), storedKey: c.storedKey.toString('base64'), serverKey: c.serverKey.toString('base64'), iterations: c.iterations };
      await this.update(u.name, (user) => ({ formatVersion: 1, scram: { ...(user?.scram ?? {}), [mechanism]: stored } }));
      done.push({ user: u.name, errorCode: ErrorCode.NONE, errorMessage: null });
    }
    return [...done, ...errors.values()];
  }

  /**
   * Compare-and-set of one user's record, retried on a concurrent change. `fn` returns the new record, or
   * undefined to write nothing (then false is returned); a record left without credentials is deleted.
   */
  private async update(user: string, fn: (current: StoredUser | undefined) => StoredUser | undefined): Promise<boolean> {
    const key = userKey(user);
    for (;;) {
      const kv = await this.store.get(key);
      const next = fn(kv ? decode(kv.value) : undefined);
      if (next === undefined) return false;
      if (Object.keys(next.scram).length === 0) {
        const res = await this.store.delete(key, { expect: { modRevision: kv!.modRevision } });
        if (res.succeeded) return true;
        continue;
      }
      const res = await this.store.compareAndSet(key, kv ? { modRevision: kv.modRevision } : { version: 0 }, Buffer.from(JSON.stringify(next)));
      if (res.succeeded) return true;
    }
  }
}

function userKey(user: string): string {
  return USERS_PREFIX + segment(user);
}

function checkNameAndMechanism(d: Deletion): Omit<UserResult, 'user'> | null {
  if (d.name.length === 0) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' };
  if (!SCRAM_MECHANISM_TYPES.has(d.mechanism)) return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' };
  return null;
}

function checkIterations(iterations: number): Omit<UserResult, 'user'> | null {
  if (iterations < MIN_SCRAM_ITERATIONS) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' };
  if (iterations > MAX_SCRAM_ITERATIONS) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too many iterations' };
  return null;
}

function decode(value: Uint8Array): StoredUser {
  const stored = JSON.parse(Buffer.from(value).toString('utf8')) as Partial<StoredUser>;
  if (stored.formatVersion !== 1 || typeof stored.scram !== 'object' || stored.scram === null) throw new Error('a /users/ record of the metadata store is not one this version reads');
  return stored as StoredUser;
}
