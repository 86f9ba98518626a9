import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { kafkaErrorOf, LedgerlineError } from '../../../protocol/errors.js';
import {
  EntryTooLargeError,
  LedgerCorruptError,
  LedgerFencedError,
  LedgerInvalidArgumentError,
  LedgerSealedError,
  LedgerStorageError,
  LedgerStoreClosedError,
  LedgerStoreLockedError,
  NoSuchLedgerError,
} from '../../../src/ledger/errors.js';

describe('ledger store errors', () => {
  it('map fencing and a closed store to NOT_LEADER_OR_FOLLOWER and disk failures to KAFKA_STORAGE_ERROR', () => {
    const eio = Object.assign(new Error('i/o error'), { code: 'EIO' });
    const cases: [LedgerlineError, string, number][] = [
      [new LedgerStorageError('fsync failed', { ledgerId: 1 }, eio), 'LL_ERR_LEDGER_STORAGE', ErrorCode.KAFKA_STORAGE_ERROR],
      [new LedgerCorruptError('bad crc'), 'LL_ERR_LEDGER_CORRUPT', ErrorCode.KAFKA_STORAGE_ERROR],
      [new NoSuchLedgerError(4), 'LL_ERR_NO_SUCH_LEDGER', ErrorCode.KAFKA_STORAGE_ERROR],
      [new LedgerStoreLockedError('/d', 'LOCK'), 'LL_ERR_LEDGER_STORE_LOCKED', ErrorCode.KAFKA_STORAGE_ERROR],
      [new LedgerFencedError(2), 'LL_ERR_LEDGER_FENCED', ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [new LedgerStoreClosedError(), 'LL_ERR_LEDGER_STORE_CLOSED', ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [new EntryTooLargeError(1, 10, 5), 'LL_ERR_ENTRY_TOO_LARGE', ErrorCode.MESSAGE_TOO_LARGE],
      [new LedgerSealedError(3), 'LL_ERR_LEDGER_SEALED', ErrorCode.UNKNOWN_SERVER_ERROR],
      [new LedgerInvalidArgumentError('reversed range'), 'LL_ERR_INVALID_ARGUMENT', ErrorCode.UNKNOWN_SERVER_ERROR],
    ];
    for (const [err, code, kafka] of cases) {
      expect(err).toBeInstanceOf(LedgerlineError);
      expect(err.code).toBe(code);
      expect(err.name).toBe(err.constructor.name);
      expect(kafkaErrorOf(err, ErrorCode.NONE)).toBe(kafka);
    }
    const storage = cases[0]![0] as LedgerStorageError;
    expect(storage.errno).toBe('EIO');
    expect(storage.cause).toBe(eio);
  });
});
