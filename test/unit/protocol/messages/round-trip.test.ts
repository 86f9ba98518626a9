/**
 * Every generated message, every version: encode → decode → encode is byte-identical and the decoded
 * value equals the original, including unknown tagged fields. Random bytes never make a decoder throw
 * anything but the codec's DecodeError. The messages, versions and fields come from the generated code
 * itself (test/support/generated-model.ts), so this runs on a bare clone without Kafka's schemas.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DecodeError, UnsupportedVersionError } from '../../../../protocol/errors.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { Writer } from '../../../../protocol/wire/writer.js';
import { messageArbitrary } from '../../../support/arbitraries.js';
import { loadMessage, specs, versionsOf } from '../../../support/schemas.js';

const messages = await Promise.all(specs.map((s) => loadMessage(s)));
const RUNS = Number(process.env.LEDGERLINE_PROPERTY_RUNS ?? 25);

function encode(m: (typeof messages)[number], value: unknown, v: number): Buffer {
  const w = new Writer(16);
  m.encode(w, value, v);
  return w.toBuffer();
}

describe.each(messages.map((m) => [m.spec.name, m] as const))('%s', (_name, m) => {
  it('round-trips every version byte for byte', () => {
    for (const v of versionsOf(m.spec)) {
      fc.assert(
        fc.property(messageArbitrary(m, v), (value) => {
          const bytes = encode(m, value, v);
          const r = new Reader(bytes);
          const decoded = m.decode(r, v);
          r.complete();
          expect(decoded).toEqual(value);
          expect(encode(m, decoded, v).equals(bytes)).toBe(true);
        }),
        { numRuns: RUNS },
      );
    }
  });

  it('decodes random bytes into a value or a DecodeError, nothing else', () => {
    for (const v of versionsOf(m.spec)) {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 64 }), (a) => {
          const r = new Reader(Buffer.from(a));
          try {
            m.decode(r, v);
            r.complete();
          } catch (e) {
            expect(e).toBeInstanceOf(DecodeError);
          }
        }),
        { numRuns: 10 },
      );
    }
  });

  it('refuses versions outside its range', () => {
    const r = new Reader(Buffer.alloc(0));
    expect(() => m.decode(r, m.spec.validVersions.max + 1)).toThrow(UnsupportedVersionError);
    expect(() => m.encode(new Writer(), m.create(), -1)).toThrow(UnsupportedVersionError);
  });
});
