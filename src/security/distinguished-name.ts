/**
 * The subject of a certificate as Java's `X500Principal.getName()` prints it, which Kafka's SSL principal and
 * `ssl.principal.mapping.rules` are written against (principal.ts).
 *
 * The distinguished name is the subject exactly as Java's `X500Principal.getName()` prints it (RFC 2253 form of
 * sun.security.x509.X500Name/RDN/AVA, JDK 11 to 21), because the mapping rules are written against that text:
 *
 *   - RDNs most specific first (the reverse of the DER order), joined by `,`, no spaces; the AVAs of a
 *     multi-valued RDN joined by `+`, in their DER order;
 *   - keywords only for CN, C, L, ST, O, OU, STREET, DC and UID (AVAKeyword's RFC 2253 set); any other type is
 *     its dotted OID, and its value `#` + the lower-case hex of the value's DER (so emailAddress prints as
 *     `1.2.840.113549.1.9.1=#16...`);
 *   - a keyword's value of type PrintableString, TeletexString, IA5String, GeneralString, BMPString or
 *     UTF8String is its content bytes decoded as UTF-8 (for every one of those types, BMPString included, with the
 *     JDK's own replacement of malformed sequences), with `\` before each of `,` `=` `+` `<` `>` `#` `;` `"` `\`,
 *     NUL written `\00`, and `\` before every leading or trailing space or CR; any other value is `#` + hex.
 * Node's own subject strings lose the order, the multi-valued RDNs and this escaping, so the subject is read from
 * the certificate's DER here. The reading is bounded: definite lengths only, everything checked against the
 * enclosing length, at most MAX_CERTIFICATE_BYTES and MAX_NAME_ATTRIBUTES.
 *
 */
import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

/**
 * No principal for a client certificate: its subject does not parse, no rule matches it (Kafka's
 * NoMatchingRule), or a rule's replacement cannot be expanded. Kafka fails the connection (the principal builder
 * throws during authentication); there is no response to carry an error code.
 */
export class SslPrincipalError extends LedgerlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LL_ERR_SSL_PRINCIPAL', ErrorCode.UNKNOWN_SERVER_ERROR, message, options);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The subject's distinguished name, as X500Principal.getName()
// ---------------------------------------------------------------------------------------------------------------

/** Larger than any certificate a TLS peer can send (OpenSSL's certificate list limit is 100 KiB). */
const MAX_CERTIFICATE_BYTES = 1024 * 1024;
/** AVAs in one Name (real subjects have fewer than 20). */
const MAX_NAME_ATTRIBUTES = 1024;
/** Java's ObjectIdentifier refuses longer encodings (MAXIMUM_OID_SIZE). */
const MAX_OID_BYTES = 4096;

/** AVAKeyword's keywords that are RFC 2253 compliant: the only ones getName() prints. */
const RFC2253_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['2.5.4.3', 'CN'],
  ['2.5.4.6', 'C'],
  ['2.5.4.7', 'L'],
  ['2.5.4.8', 'ST'],
  ['2.5.4.9', 'STREET'],
  ['2.5.4.10', 'O'],
  ['2.5.4.11', 'OU'],
  ['0.9.2342.19200300.100.1.1', 'UID'],
  ['0.9.2342.19200300.100.1.25', 'DC'],
]);

/** AVA.isDerString (non-canonical): the value types printed as text. */
const STRING_TAGS: ReadonlySet<number> = new Set([
  0x0c, // UTF8String
  0x13, // PrintableString
  0x14, // TeletexString (T61String)
  0x16, // IA5String
  0x1b, // GeneralString
  0x1e, // BMPString
]);

const TAG_SEQUENCE = 0x30;
const TAG_SET = 0x31;
const TAG_INTEGER = 0x02;
const TAG_OID = 0x06;
const TAG_VERSION = 0xa0; // [0] EXPLICIT Version

/** One DER element: its tag, where it starts, where its content starts and where it ends (exclusive). */
interface Tlv {
  readonly tag: number;
  readonly start: number;
  readonly contentStart: number;
  readonly end: number;
}

function malformed(what: string): SslPrincipalError {
  return new SslPrincipalError(`client certificate subject does not parse: ${what}`);
}

/** Reads the DER element at `offset`, which must end by `limit`. */
function readTlv(der: Uint8Array, offset: number, limit: number, expectTag?: number): Tlv {
  if (offset + 2 > limit) throw malformed(`element truncated at byte ${offset}`);
  const tag = der[offset]!;
  if ((tag & 0x1f) === 0x1f) throw malformed(`multi-byte tag at byte ${offset}`);
  if (expectTag !== undefined && tag !== expectTag) throw malformed(`tag 0x${tag.toString(16)} at byte ${offset}, expected 0x${expectTag.toString(16)}`);
  let length = der[offset + 1]!;
  let p = offset + 2;
  if (length & 0x80) {
    const octets = length & 0x7f;
    // 0 is BER's indefinite length, which DER does not have; 4 octets already exceed any bound here.
    if (octets === 0 || octets > 4) throw malformed(`length of ${octets === 0 ? 'indefinite' : `${octets} octets`} at byte ${offset}`);
    if (p + octets > limit) throw malformed(`length truncated at byte ${offset}`);
    length = 0;
    for (let i = 0; i < octets; i++) length = length * 256 + der[p++]!;
  }
  if (length > limit - p) throw malformed(`element at byte ${offset} runs past its enclosing element`);
  return { tag, start: offset, contentStart: p, end: p + length };
}

/** The DER of a certificate's subject Name (Certificate → TBSCertificate → subject, RFC 5280 §4.1). */
function subjectDer(certificate: Uint8Array): Uint8Array {
  if (certificate.length > MAX_CERTIFICATE_BYTES) throw malformed(`certificate of ${certificate.length} bytes`);
  const cert = readTlv(certificate, 0, certificate.length, TAG_SEQUENCE);
  const tbs = readTlv(certificate, cert.contentStart, cert.end, TAG_SEQUENCE);
  let field = readTlv(certificate, tbs.contentStart, tbs.end);
  if (field.tag === TAG_VERSION) field = readTlv(certificate, field.end, tbs.end);
  if (field.tag !== TAG_INTEGER) throw malformed('no serial number');
  const signature = readTlv(certificate, field.end, tbs.end, TAG_SEQUENCE);
  const issuer = readTlv(certificate, signature.end, tbs.end, TAG_SEQUENCE);
  const validity = readTlv(certificate, issuer.end, tbs.end, TAG_SEQUENCE);
  const subject = readTlv(certificate, validity.end, tbs.end, TAG_SEQUENCE);
  return certificate.subarray(subject.start, subject.end);
}

/** Dotted form of an OBJECT IDENTIFIER's content, checked as Java's ObjectIdentifier checks it. */
function oidString(der: Uint8Array, oid: Tlv): string {
  const { contentStart: start, end } = oid;
  if (end === start || end - start > MAX_OID_BYTES) throw malformed(`object identifier of ${end - start} bytes`);
  if (der[end - 1]! & 0x80) throw malformed('object identifier not ended');
  const arcs: bigint[] = [];
  let value = 0n;
  for (let i = start; i < end; i++) {
    const b = der[i]!;
    if (b === 0x80 && (i === start || (der[i - 1]! & 0x80) === 0)) throw malformed('object identifier with a useless 0x80 octet');
    value = (value << 7n) | BigInt(b & 0x7f);
    if ((b & 0x80) === 0) {
      arcs.push(value);
      value = 0n;
    }
  }
  const first = arcs[0]!;
  const head = first < 40n ? [0n, first] : first < 80n ? [1n, first - 40n] : [2n, first - 80n];
  return [...head, ...arcs.slice(1)].join('.');
}

/**
 * `new String(bytes, UTF_8)` as the JDK (11 to 21, String/StringCoding.decodeUTF8_UTF16) decodes it: a leading
 * U+FEFF is kept, and each malformed sequence becomes one U+FFFD per the JDK's own grouping, which is not the
 * WHATWG grouping TextDecoder uses (an encoded surrogate, ED A0 80, is one U+FFFD in Java, three in TextDecoder;
 * a truncated sequence at the end swallows the byte after its lead).
 */
function javaUtf8(bytes: Uint8Array): string {
  const REPL = 0xfffd;
  const units: number[] = [];
  const cont = (b: number): boolean => (b & 0xc0) === 0x80;
  const n = bytes.length;
  let sp = 0;
  while (sp < n) {
    const b1 = bytes[sp++]!;
    if (b1 < 0x80) {
      units.push(b1);
    } else if (b1 >= 0xc2 && b1 <= 0xdf) {
      if (sp >= n) {
        units.push(REPL);
        break;
      }
      const b2 = bytes[sp]!;
      if (!cont(b2)) {
        units.push(REPL);
        continue;
      }
      sp++;
      units.push(((b1 & 0x1f) << 6) | (b2 & 0x3f));
    } else if (b1 >= 0xe0 && b1 <= 0xef) {
      const bad2 = (b2: number): boolean => (b1 === 0xe0 && (b2 & 0xe0) === 0x80) || !cont(b2);
      if (sp + 1 < n) {
        const b2 = bytes[sp]!;
        const b3 = bytes[sp + 1]!;
        if (bad2(b2) || !cont(b3)) {
          units.push(REPL);
          sp += bad2(b2) ? 0 : 1; // malformed3: the lead alone, or the lead and a good second byte
          continue;
        }
        sp += 2;
        const c = ((b1 & 0x0f) << 12) | ((b2 & 0x3f) << 6) | (b3 & 0x3f);
        units.push(c >= 0xd800 && c <= 0xdfff ? REPL : c);
        continue;
      }
      units.push(REPL);
      if (sp < n && bad2(bytes[sp]!)) continue;
      break;
    } else if (b1 >= 0xf0 && b1 <= 0xf7) {
      const bad2 = (b2: number): boolean => (b1 === 0xf0 && (b2 < 0x90 || b2 > 0xbf)) || (b1 === 0xf4 && (b2 & 0xf0) !== 0x80) || !cont(b2);
      if (sp + 2 < n) {
        const b2 = bytes[sp]!;
        const b3 = bytes[sp + 1]!;
        const b4 = bytes[sp + 2]!;
        const cp = ((b1 & 0x07) << 18) | ((b2 & 0x3f) << 12) | ((b3 & 0x3f) << 6) | (b4 & 0x3f);
        if (!cont(b2) || !cont(b3) || !cont(b4) || cp < 0x10000 || cp > 0x10ffff) {
          units.push(REPL);
          // malformed4: the lead alone, with a good second byte, or with good second and third bytes
          sp += b1 > 0xf4 || bad2(b2) ? 0 : !cont(b3) ? 1 : 2;
          continue;
        }
        sp += 3;
        units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
        continue;
      }
      if (b1 > 0xf4 || (sp < n && bad2(bytes[sp]!))) {
        units.push(REPL);
        continue;
      }
      sp++;
      units.push(REPL);
      if (sp < n && !cont(bytes[sp]!)) continue;
      break;
    } else {
      units.push(REPL);
    }
  }
  let out = '';
  for (let i = 0; i < units.length; i += 4096) out += String.fromCharCode(...units.slice(i, i + 4096));
  return out;
}

/** An AVA value's text as AVA.toRFC2253String escapes it. */
function escapeValue(value: string): string {
  let escaped = '';
  for (const c of value) {
    if (c.length === 1 && ',=+<>#;"\\'.includes(c)) escaped += `\\${c}`;
    else if (c === '\u0000') escaped += '\\00';
    else escaped += c;
  }
  // Then a backslash before each leading and trailing space or CR (counted over the escaped text, as Java does).
  let lead = 0;
  while (lead < escaped.length && (escaped[lead] === ' ' || escaped[lead] === '\r')) lead++;
  let trail = escaped.length - 1;
  while (trail >= 0 && (escaped[trail] === ' ' || escaped[trail] === '\r')) trail--;
  if (lead === 0 && trail === escaped.length - 1) return escaped;
  let out = '';
  for (let i = 0; i < escaped.length; i++) out += i < lead || i > trail ? `\\${escaped[i]}` : escaped[i];
  return out;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/**
 * A DER-encoded X.500 Name (RDNSequence) in the RFC 2253 form of Java's `X500Principal.getName()`.
 * Throws SslPrincipalError for bytes that are not a Name.
 */
export function rfc2253Name(nameDer: Uint8Array): string {
  if (nameDer.length > MAX_CERTIFICATE_BYTES) throw malformed(`name of ${nameDer.length} bytes`);
  const name = readTlv(nameDer, 0, nameDer.length, TAG_SEQUENCE);
  if (name.end !== nameDer.length) throw malformed('bytes after the name');
  const rdns: string[] = [];
  let attributes = 0;
  for (let p = name.contentStart; p < name.end; ) {
    const rdn = readTlv(nameDer, p, name.end, TAG_SET);
    const avas: string[] = [];
    for (let q = rdn.contentStart; q < rdn.end; ) {
      if (++attributes > MAX_NAME_ATTRIBUTES) throw malformed(`more than ${MAX_NAME_ATTRIBUTES} attributes`);
      const ava = readTlv(nameDer, q, rdn.end, TAG_SEQUENCE);
      const type = readTlv(nameDer, ava.contentStart, ava.end, TAG_OID);
      const value = readTlv(nameDer, type.end, ava.end);
      if (value.end !== ava.end) throw malformed('attribute with bytes after its value');
      const oid = oidString(nameDer, type);
      const keyword = RFC2253_KEYWORDS.get(oid) ?? oid;
      if (keyword === oid || !STRING_TAGS.has(value.tag)) avas.push(`${keyword}=#${hex(nameDer.subarray(value.start, value.end))}`);
      else avas.push(`${keyword}=${escapeValue(javaUtf8(nameDer.subarray(value.contentStart, value.end)))}`);
      q = ava.end;
    }
    rdns.push(avas.join('+'));
    p = rdn.end;
  }
  return rdns.reverse().join(',');
}

/**
 * The subject of a certificate as Java's `X509Certificate.getSubjectX500Principal().getName()` prints it: the
 * distinguished name Kafka's SSL principal mapping rules see. Throws SslPrincipalError for a certificate whose
 * DER does not parse.
 */
export function distinguishedName(cert: X509Certificate | PeerCertificate): string {
  return rfc2253Name(subjectDer(cert.raw));
}
