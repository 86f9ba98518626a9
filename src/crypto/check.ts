/**
 * The broker's rule for a topic with `ledgerline.encryption.required=true`: every record it accepts carries
 * a well-formed envelope (envelope.ts), and a value that can be a sealed one (at least its 16-byte tag).
 * The broker holds no key: it checks the form, never the cryptography, and never logs a payload.
 * protocol/records/validate.ts applies the rule while it scans a produced batch, so an ordinary topic pays
 * nothing for it.
 */
import type { EnvelopeRule } from '../../protocol/records/validate.js';
import { ENVELOPE_HEADER, envelopeFormatError, TAG_BYTES } from './envelope.js';

/** The topic config that turns the rule on (a Ledgerline topic config, named in Kafka's style). */
export const ENCRYPTION_REQUIRED_CONFIG = 'ledgerline.encryption.required';

export const ENVELOPE_RULE: EnvelopeRule = {
  header: Buffer.from(ENVELOPE_HEADER, 'latin1'),
  check(headerValue: Buffer, valueLength: number): string | null {
    const why = envelopeFormatError(headerValue);
    if (why !== null) return `Record's ${ENVELOPE_HEADER} header is not a well-formed envelope: ${why}`;
    if (valueLength >= 0 && valueLength < TAG_BYTES) return `Record's value is ${valueLength} bytes, shorter than the ${TAG_BYTES}-byte tag of a sealed value`;
    return null;
  },
};
