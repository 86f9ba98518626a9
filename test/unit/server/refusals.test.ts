import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { findRefusal, RefusalLog, type Refusal } from '../../../src/server/refusals.js';

function memoryLog(): { log: Logger; lines: () => Record<string, unknown>[] } {
  const out: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      out.push(chunk.toString('utf8'));
      cb();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines: () => out.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const refusal = (over: Partial<Refusal> = {}): Refusal => ({
  clientId: 'app',
  remoteAddress: '10.0.0.5:50001',
  apiKey: 22,
  api: 'InitProducerId',
  apiVersion: 4,
  correlationId: 1,
  reason: 'transactions are not supported yet',
  errorCode: ErrorCode.INVALID_REQUEST,
  resource: null,
  level: 'warn',
  ...over,
});

describe('findRefusal', () => {
  it('finds a top-level refusal code with its errorMessage', () => {
    expect(findRefusal({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'no' })).toEqual({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'no', resource: null, topLevel: true });
  });

  it('finds a refused resource nested in arrays and names it', () => {
    const res = { errorCode: 0, topics: [{ name: 'ok', errorCode: 0 }, { name: 'bad', errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: 'policy' }] };
    expect(findRefusal(res)).toEqual({ errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: 'policy', resource: 'bad', topLevel: false });
    const produce = { responses: [{ name: 't', partitionResponses: [{ index: 0, errorCode: 0 }, { index: 3, errorCode: ErrorCode.CORRUPT_MESSAGE, errorMessage: null }] }] };
    expect(findRefusal(produce)).toMatchObject({ errorCode: ErrorCode.CORRUPT_MESSAGE, resource: 't-3' });
  });

  it('does not count the protocol\'s normal-flow errors, and never looks into record bytes', () => {
    expect(findRefusal({ errorCode: ErrorCode.NOT_COORDINATOR })).toBeNull();
    expect(findRefusal({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS, members: [] })).toBeNull();
    expect(findRefusal({ errorCode: 0, responses: [{ topic: 't', partitions: [{ partitionIndex: 0, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, records: [Buffer.alloc(8)] }] }] })).toBeNull();
    expect(findRefusal({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH })).toBeNull();
  });
});

describe('RefusalLog', () => {
  it('logs one line per client, API and reason within the window, then one saying how many it left out', () => {
    const { log, lines } = memoryLog();
    let now = 1_000;
    const refusals = new RefusalLog(log, { windowMs: 60_000, now: () => now });
    expect(refusals.report(refusal({ correlationId: 1 }))).toBe(true);
    // Retries, also from a new connection (new port) of the same client.
    for (let i = 2; i <= 10; i++) expect(refusals.report(refusal({ correlationId: i, remoteAddress: `10.0.0.5:${50000 + i}` }))).toBe(false);
    // Another reason, API or client is its own line.
    expect(refusals.report(refusal({ reason: 'another reason' }))).toBe(true);
    expect(refusals.report(refusal({ clientId: 'other' }))).toBe(true);
    expect(refusals.report(refusal({ apiKey: 19, api: 'CreateTopics' }))).toBe(true);
    expect(lines()).toHaveLength(4);
    expect(lines()[0]).toMatchObject({ level: 40, clientId: 'app', remote: '10.0.0.5:50001', api: 'InitProducerId', apiVersion: 4, correlationId: 1, error: 'INVALID_REQUEST', reason: 'transactions are not supported yet' });
    now += 60_000;
    expect(refusals.report(refusal({ correlationId: 11 }))).toBe(true);
    expect(lines()[4]).toMatchObject({ correlationId: 11, repeated: 9 });
  });

  it('remembers a bounded number of keys, forgetting the oldest', () => {
    const { log, lines } = memoryLog();
    const refusals = new RefusalLog(log, { maxKeys: 2, now: () => 0 });
    refusals.report(refusal({ reason: 'a' }));
    refusals.report(refusal({ reason: 'b' }));
    refusals.report(refusal({ reason: 'c' }));
    // 'a' was forgotten when 'c' came: it is logged again; 'c' is still remembered.
    expect(refusals.report(refusal({ reason: 'a' }))).toBe(true);
    expect(refusals.report(refusal({ reason: 'c' }))).toBe(false);
    expect(lines()).toHaveLength(4);
  });
});
