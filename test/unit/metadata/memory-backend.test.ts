/**
 * What only the memory engine has: its events indexed by key in the volume, kept right through compaction,
 * rolled-back writes and a reopen. Its behaviour as a MetadataStore is covered by store-contract.test.ts.
 */

import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../../src/metadata/backend.js';
import { MemoryBackend, MemoryMetadataVolume } from '../../../src/metadata/memory-backend.js';
import { bytes } from './support.js';

function put(key: string, revision: number, seq = 0): StoredEvent {
  return {
    revision,
    seq,
    type: 'put',
    kv: { key, value: bytes(String(revision)), createRevision: revision, modRevision: revision, version: 1, lease: 0 },
    prev: null,
  };
}

const revisions = (events: StoredEvent[]) => events.map((e) => `${e.kv.key}@${e.revision}.${e.seq}`);

describe('memory metadata engine', () => {
  it("reads only one key's or one prefix's events for a watch's history, in revision order", () => {
    const backend = new MemoryBackend(new MemoryMetadataVolume());
    backend.atomically(() => {
      for (let r = 2; r < 2_002; r++) backend.appendEvents([put(r % 100 === 0 ? '/p/watched' : `/p/others/${r % 97}`, r)]);
    });
    expect(backend.readEvents(2, { key: '/p/watched' }).map((e) => e.revision)).toEqual(Array.from({ length: 20 }, (_, i) => 100 * (i + 1)));
    expect(backend.readEvents(1_000, { prefix: '/p/w' }).map((e) => e.revision)).toEqual(Array.from({ length: 11 }, (_, i) => 1_000 + 100 * i));
    expect(backend.readEvents(1_990, { prefix: '/p/' })).toHaveLength(12);
    expect(backend.readEvents(1_990)).toHaveLength(12);
    expect(backend.readEvents(2, { key: '/never' })).toEqual([]);
  });

  it('keeps the events by key right when a write rolls back, after compaction, and across a reopen', () => {
    const volume = new MemoryMetadataVolume();
    let backend = new MemoryBackend(volume);
    backend.atomically(() => backend.appendEvents([put('/a', 2, 0), put('/b', 2, 1), put('/a', 3)]));
    // A savepoint that fails undoes its events, its compaction too, and nothing before it.
    backend.atomically(() => {
      try {
        backend.atomically(() => {
          backend.appendEvents([put('/a', 4), put('/c', 4, 1)]);
          backend.compactEvents(4);
          throw new Error('rolled back');
        });
      } catch {
        // the outer transaction goes on
      }
      backend.appendEvents([put('/b', 4)]);
    });
    expect(revisions(backend.readEvents(0, { key: '/a' }))).toEqual(['/a@2.0', '/a@3.0']);
    expect(revisions(backend.readEvents(0, { key: '/c' }))).toEqual([]);
    expect(revisions(backend.readEvents(0, { key: '/b' }))).toEqual(['/b@2.1', '/b@4.0']);
    backend.compactEvents(3);
    expect(revisions(backend.readEvents(0, { key: '/a' }))).toEqual(['/a@3.0']);
    expect(revisions(backend.readEvents(0, { key: '/b' }))).toEqual(['/b@4.0']);
    expect(revisions(backend.readEvents(0))).toEqual(['/a@3.0', '/b@4.0']);
    backend.close();
    backend = new MemoryBackend(volume);
    expect(revisions(backend.readEvents(4, { key: '/b' }))).toEqual(['/b@4.0']);
    expect(revisions(backend.readEvents(0, { prefix: '/' }))).toEqual(['/a@3.0', '/b@4.0']);
    backend.close();
  });
});
