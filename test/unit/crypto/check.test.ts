/** The broker's rule for topics with ledgerline.encryption.required (src/crypto/check.ts, applied in protocol/records/validate.ts). */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CompressionType } from '../../../protocol/compression/index.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { buildRecordBatch, RecordValidationError, validateProducePartitionRecords, validateProducedRecords, type RecordInput } from '../../../protocol/records/index.js';
import { ENVELOPE_RULE } from '../../../src/crypto/check.js';
import { ENVELOPE_HEADER } from '../../../src/crypto/envelope.js';
import { sealRecord, type E2eRecord } from '../../../src/crypto/record.js';

const T0 = 1_700_000_000_000;

function sealed(value: Buffer | null, key: Buffer | null = Buffer.from('k')): E2eRecord {
  return sealRecord(
    { key, value, headers: [{ key: 'trace', value: Buffer.from('t') }] },
    { topic: 'orders', dataKeyId: randomBytes(16), dataKey: randomBytes(32), nonceBase: randomBytes(12), wrappedKeys: [{ keyId: 'r1', algorithm: 2, wrapped: randomBytes(92) }] },
  );
}

const input = (r: E2eRecord): RecordInput => ({ key: r.key ?? undefined, value: r.value ?? undefined, headers: r.headers.map((h) => ({ key: h.key, value: h.value })) });

async function check(records: RecordInput[], compression: number = CompressionType.NONE, rule = ENVELOPE_RULE): Promise<RecordValidationError | null> {
  const batch = validateProducePartitionRecords(await buildRecordBatch(records, { compression, now: T0 } as never), 11);
  try {
    await validateProducedRecords(batch, { nowMs: T0, createTime: true, timestampBeforeMaxMs: null, timestampAfterMaxMs: null, envelope: rule, topicPartition: 'orders-0' });
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(RecordValidationError);
    return e as RecordValidationError;
  }
}

describe('a topic that requires end-to-end encryption', () => {
  for (const codec of [CompressionType.NONE, CompressionType.GZIP, CompressionType.LZ4, CompressionType.ZSTD]) {
    it(`accepts sealed records and tombstones (compression ${codec})`, async () => {
      const tomb: RecordInput = { key: Buffer.from('gone'), headers: [] };
      expect(await check([input(sealed(Buffer.from('secret value'))), input(sealed(null)), tomb, input(sealed(Buffer.alloc(0)))], codec)).toBeNull();
    });

    it(`refuses a plaintext record with INVALID_RECORD naming the record and the reason (compression ${codec})`, async () => {
      const err = await check([input(sealed(Buffer.from('a'))), { key: Buffer.from('k'), value: Buffer.from('plain text') }], codec);
      expect(err?.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
      expect(err?.recordErrors).toEqual([{ batchIndex: 1, message: `Record has no ${ENVELOPE_HEADER} header (it is not end-to-end encrypted); topic partition orders-0 requires end-to-end encryption` }]);
      expect(err?.message).toContain('One or more records have been rejected due to 1 record errors in total');
    });
  }

  it('refuses a malformed envelope, saying what is wrong with it', async () => {
    const good = sealed(Buffer.from('v'));
    const env = good.headers.find((h) => h.key === ENVELOPE_HEADER)!.value!;
    const cases: [string, Buffer | null, string][] = [
      ['truncated', env.subarray(0, 20), 'envelope ends inside the fixed head'],
      ['version 9', Buffer.concat([Buffer.of(9), env.subarray(1)]), 'unknown envelope version 9'],
      ['unknown flag', Buffer.concat([env.subarray(0, 2), Buffer.of(env[2]! | 0x40), env.subarray(3)]), 'unknown flags 0x41'],
      ['trailing byte', Buffer.concat([env, Buffer.of(1)]), '1 bytes follow the envelope'],
      ['null header value', null, 'header has a null value'],
    ];
    for (const [what, value, message] of cases) {
      const err = await check([{ key: good.key!, value: good.value!, headers: [{ key: 'trace', value: Buffer.from('t') }, { key: ENVELOPE_HEADER, value }] }]);
      expect(err?.recordErrors[0]?.message, what).toContain(message);
    }
  });

  it('refuses two envelopes on one record and a value too short to be sealed', async () => {
    const good = sealed(Buffer.from('v'));
    const env = good.headers.find((h) => h.key === ENVELOPE_HEADER)!;
    expect((await check([{ key: good.key!, value: good.value!, headers: [env, env] }]))?.recordErrors[0]?.message).toContain(`Record has 2 ${ENVELOPE_HEADER} headers`);
    expect((await check([{ key: good.key!, value: Buffer.from('short'), headers: [env] }]))?.recordErrors[0]?.message).toContain('shorter than the 16-byte tag');
  });

  it('reports every failing record of a batch, and lets the others be', async () => {
    const records: RecordInput[] = [];
    for (let i = 0; i < 10; i++) records.push(i % 3 === 0 ? { key: Buffer.from('k'), value: Buffer.from('plain') } : input(sealed(Buffer.from(`v${i}`))));
    const err = await check(records);
    expect(err?.recordErrors.map((e) => e.batchIndex)).toEqual([0, 3, 6, 9]);
  });
});

describe('envelopeFormatError (the broker check) and decodeEnvelope (the readers)', () => {
  it('agree on every truncation and every single-byte change of an envelope', async () => {
    const { decodeEnvelope, envelopeFormatError, EnvelopeFormatError } = await import('../../../src/crypto/envelope.js');
    const { sealRecord } = await import('../../../src/crypto/record.js');
    const r = sealRecord(
      { key: Buffer.from('k'), value: Buffer.from('v'), headers: [{ key: 's', value: Buffer.from('x') }] },
      { topic: 't', dataKeyId: randomBytes(16), dataKey: randomBytes(32), nonceBase: randomBytes(12), wrappedKeys: [{ keyId: 'a', algorithm: 1, wrapped: randomBytes(256) }, { keyId: 'b', algorithm: 2, wrapped: randomBytes(92) }], pseudonym: { keyId: 'p', secret: randomBytes(32) }, sealHeaders: ['s'] },
    );
    const env = r.headers.find((h) => h.key === ENVELOPE_HEADER)!.value!;
    const variants: Buffer[] = [];
    for (let i = 0; i <= env.length; i++) variants.push(env.subarray(0, i));
    for (let i = 0; i < env.length; i += 7) for (const v of [0, 0xff, env[i]! ^ 1]) variants.push(Buffer.concat([env.subarray(0, i), Buffer.of(v), env.subarray(i + 1)]));
    for (const v of variants) {
      let decoded: string | null = null;
      try {
        decodeEnvelope(v);
      } catch (e) {
        expect(e).toBeInstanceOf(EnvelopeFormatError);
        decoded = (e as Error).message;
      }
      expect(envelopeFormatError(v)).toBe(decoded);
    }
  });
});
