/**
 * FollowedRecords: records written through one broker reach the others, and a broker whose watch ended reads
 * them again, telling its listeners what was deleted meanwhile without dropping what it wrote itself after the
 * read. On a real in-memory store, its watches ended and its reads held by the wrapper of the metadata tests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MetadataCompactedError, openMemoryMetadataStore, type MetadataStore } from '../../../src/metadata/index.js';
import { FollowedRecords } from '../../../src/replication/records.js';
import { FaultyStore, until } from '../metadata/support.js';

interface Link {
  readonly name: string;
  readonly servers: string;
}

describe('FollowedRecords', () => {
  const stores: MetadataStore[] = [];
  const opened: FollowedRecords<Link>[] = [];
  afterEach(async () => {
    for (const r of opened.splice(0)) await r.close();
    for (const s of stores.splice(0)) await s.close();
  });

  async function records(store: MetadataStore): Promise<{ records: FollowedRecords<Link>; told: string[]; errors: Error[] }> {
    const errors: Error[] = [];
    const r = new FollowedRecords<Link>(store, '/links/', (l) => (l.servers === '' ? 'no servers' : null), (err) => errors.push(err));
    opened.push(r);
    const told: string[] = [];
    r.onChange((name, value) => told.push(`${name}=${value?.servers ?? 'deleted'}`));
    await r.load();
    return { records: r, told, errors };
  }

  it('reads again after its watch ended: what was deleted meanwhile goes, what it wrote after the read stays', async () => {
    const inner = await openMemoryMetadataStore();
    stores.push(inner);
    const faulty = new FaultyStore(inner);
    const here = await records(faulty.asStore());
    const other = await records(inner);
    await other.records.create('gone', { name: 'gone', servers: 'a:9092' });
    await other.records.create('kept', { name: 'kept', servers: 'b:9092' });
    await until(() => here.records.list().length === 2, 'both records here');

    // The watch ends; the read again is held after its page until this broker has written a record.
    const read = faulty.holdNextRead();
    faulty.endWatch(new MetadataCompactedError(3, 4));
    await other.records.delete('gone'); // issued before the read again starts, seen by it
    await read.started;
    await here.records.create('mine', { name: 'mine', servers: 'c:9092' });
    read.release();
    await until(() => here.records.get('gone') === undefined, 'the deleted record gone here', 5_000);
    await other.records.create('later', { name: 'later', servers: 'd:9092' });
    await until(() => here.records.get('later') !== undefined, 'a record written afterwards', 5_000);
    expect(here.records.list().map((l) => l.name)).toEqual(['kept', 'later', 'mine']);
    expect(here.told).toEqual(['gone=a:9092', 'kept=b:9092', 'mine=c:9092', 'gone=deleted', 'later=d:9092']);
    expect(here.errors.map((e) => (e as { code?: string }).code)).toEqual(['LL_ERR_METADATA_COMPACTED']);
  });
});
