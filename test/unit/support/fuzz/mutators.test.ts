/**
 * The fuzzer's structural mutations (test/support/fuzz/mutators.ts): a second lie on a frame the first one
 * shortened or cut keeps to the frame's bytes instead of failing the case's generation.
 */
import { describe, expect, it } from 'vitest';
import { ApiVersionsApi } from '../../../../protocol/messages/018-api-versions.gen.js';
import { encodeTracedFrame, mutateStructure } from '../../../support/fuzz/mutators.js';
import { Prng } from '../../../support/fuzz/prng.js';

describe('mutateStructure', () => {
  const encoded = encodeTracedFrame(ApiVersionsApi, 3, 7, 'fuzz', ApiVersionsApi.request.create({ clientSoftwareName: 'a-client-name', clientSoftwareVersion: '1.2.3' }));

  it('lies at one of the recorded sites, the rest of the frame untouched', () => {
    for (let i = 0; i < 200; i++) {
      const m = mutateStructure(new Prng(1, i), encoded);
      expect(m.what).toMatch(/@\d+/);
      expect(m.bytes.readInt32BE(0)).toBe(m.bytes.length - 4);
    }
  });

  it('lies only where the frame still has bytes after a first lie cut it', () => {
    const lastSite = Math.max(...encoded.sites.map((s) => s.at));
    for (const cut of [lastSite, lastSite - 1, encoded.bodyAt, 6]) {
      const bytes = Buffer.from(encoded.bytes.subarray(0, cut));
      bytes.writeInt32BE(bytes.length - 4, 0);
      for (let i = 0; i < 200; i++) {
        const m = mutateStructure(new Prng(2, i), { ...encoded, bytes });
        const at = /@(\d+)/.exec(m.what);
        if (at) expect(Number(at[1])).toBeLessThan(cut);
        else expect(m).toEqual({ bytes, what: 'no site left to lie at' });
      }
    }
  });
});
