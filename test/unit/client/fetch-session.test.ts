import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { FetchApi } from '../../../protocol/messages/001-fetch.gen.js';
import type { FetchResponse } from '../../../protocol/messages/001-fetch.gen.js';
import { FetchSession, FetchSessionEpoch } from '../../../src/client/fetch-session.js';
import type { SessionPartition } from '../../../src/client/fetch-session.js';

const ID_A = 'AAAAAAAAAAAAAAAAAAAAAQ';
const ID_B = 'AAAAAAAAAAAAAAAAAAAAAg';

function part(topic: string, partition: number, fetchOffset: bigint): SessionPartition {
  return { topic, topicId: topic === 'a' ? ID_A : ID_B, partition, fetchOffset, partitionMaxBytes: 1024 };
}

function answer(sessionId: number, errorCode = 0): FetchResponse {
  return FetchApi.response.create({ sessionId, errorCode });
}

function sent(fields: { topics: Array<{ topic: string; partitions: Array<{ partition: number; fetchOffset: bigint }> }> }): string[] {
  return fields.topics.flatMap((t) => t.partitions.map((p) => `${t.topic}-${p.partition}@${p.fetchOffset}`));
}

describe('FetchSession (KIP-227)', () => {
  it('opens a session with a full request, then names only partitions whose position moved', () => {
    const s = new FetchSession();
    const first = s.build([part('a', 0, 0n), part('a', 1, 0n), part('b', 0, 5n)], 17);
    expect(first).toMatchObject({ sessionId: 0, sessionEpoch: FetchSessionEpoch.INITIAL, full: true });
    expect(sent(first)).toEqual(['a-0@0', 'a-1@0', 'b-0@5']);
    expect(s.onResponse(answer(42))).toBe(true);
    expect(s.sessionId).toBe(42);

    const second = s.build([part('a', 0, 10n), part('a', 1, 0n), part('b', 0, 5n)], 17);
    expect(second).toMatchObject({ sessionId: 42, sessionEpoch: 1, full: false, forgottenTopicsData: [] });
    expect(sent(second)).toEqual(['a-0@10']);
    s.onResponse(answer(42));

    const third = s.build([part('a', 0, 10n), part('a', 1, 0n), part('b', 0, 5n)], 17);
    expect(third.sessionEpoch).toBe(2);
    expect(third.topics).toEqual([]);
  });

  it('forgets partitions the caller no longer wants, by topic id from v13 and by name before', () => {
    for (const [version, expected] of [
      [17, { topic: '', topicId: ID_B, partitions: [0] }],
      [12, { topic: 'b', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [0] }],
    ] as const) {
      const s = new FetchSession();
      s.build([part('a', 0, 0n), part('b', 0, 0n)], version);
      s.onResponse(answer(7));
      const next = s.build([part('a', 0, 0n)], version);
      expect(next.forgottenTopicsData).toEqual([expected]);
      expect(next.topics).toEqual([]);
    }
  });

  it('starts over with a full request after the broker drops the session', () => {
    const s = new FetchSession();
    s.build([part('a', 0, 0n)], 17);
    s.onResponse(answer(9));
    s.build([part('a', 0, 3n)], 17);
    expect(s.onResponse(answer(0, ErrorCode.FETCH_SESSION_ID_NOT_FOUND))).toBe(false);
    const again = s.build([part('a', 0, 3n)], 17);
    expect(again).toMatchObject({ sessionId: 0, sessionEpoch: 0, full: true });
    expect(sent(again)).toEqual(['a-0@3']);
  });

  it('starts over after a failed request, whose effect on the broker is unknown', () => {
    const s = new FetchSession();
    s.build([part('a', 0, 0n)], 17);
    s.onResponse(answer(9));
    s.build([part('a', 0, 1n)], 17);
    s.onError();
    expect(s.build([part('a', 0, 1n)], 17).full).toBe(true);
  });

  it('keeps sending full requests when the broker creates no session', () => {
    const s = new FetchSession();
    s.build([part('a', 0, 0n)], 17);
    s.onResponse(answer(0));
    expect(s.build([part('a', 0, 0n)], 17)).toMatchObject({ sessionId: 0, sessionEpoch: 0, full: true });
  });

  it('makes sessionless requests below Fetch v7', () => {
    const s = new FetchSession();
    const f = s.build([part('a', 0, 0n)], 6);
    expect(f).toMatchObject({ sessionId: 0, sessionEpoch: FetchSessionEpoch.FINAL, full: true });
  });

  it('builds a close request for an open session only', () => {
    const s = new FetchSession();
    expect(s.closeFields()).toBeNull();
    s.build([part('a', 0, 0n)], 17);
    s.onResponse(answer(5));
    expect(s.closeFields()).toMatchObject({ sessionId: 5, sessionEpoch: FetchSessionEpoch.FINAL, topics: [] });
    expect(s.sessionId).toBe(0);
  });
});
