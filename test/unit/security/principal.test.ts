/**
 * The SSL principal (src/security/principal.ts): subjects formatted as Java's X500Principal.getName() and Kafka's
 * SslPrincipalMapper rules.
 *
 * Every expected distinguished name below is what Java 17 printed for the same certificate or Name DER
 * (`new X500Principal(der).getName()`, `cert.getSubjectX500Principal().getName()`), and every mapper
 * expectation marked "Kafka 4.4.0" is what kafka-clients 4.4.0's SslPrincipalMapper returned or threw for the
 * same rules and DN; the rest are Kafka's own SslPrincipalMapperTest cases.
 */
import type { PeerCertificate } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../../src/api/services.js';
import { distinguishedName, rfc2253Name } from '../../../src/security/distinguished-name.js';
import { SslPrincipalError, SslPrincipalMapper, SslPrincipalRuleError, sslPrincipal } from '../../../src/security/principal.js';
import { TestPki } from '../../support/certs.js';

// A small DER writer for Names the openssl CLI cannot make (other string types, malformed UTF-8, NUL, ...).
function der(tag: number, ...content: Uint8Array[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}
function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(BigInt);
  const base128 = (v: bigint): number[] => {
    const out = [Number(v & 0x7fn)];
    for (v >>= 7n; v > 0n; v >>= 7n) out.unshift(Number(v & 0x7fn) | 0x80);
    return out;
  };
  return der(0x06, Buffer.from([...base128(arcs[0]! * 40n + arcs[1]!), ...arcs.slice(2).flatMap(base128)]));
}
const UTF8 = 0x0c;
const PRINTABLE = 0x13;
const IA5 = 0x16;
const CN = '2.5.4.3';
const ava = (type: string, tag: number, value: string | Uint8Array): Buffer => der(0x30, oid(type), der(tag, typeof value === 'string' ? Buffer.from(value, 'utf8') : value));
const rdn = (...avas: Buffer[]): Buffer => der(0x31, ...avas);
const name = (...rdns: Buffer[]): Buffer => der(0x30, ...rdns);
const cn = (value: string | Uint8Array, tag = UTF8): Buffer => name(rdn(ava(CN, tag, value)));

describe('distinguishedName of certificates', () => {
  let pki: TestPki;
  let issued = 0;
  beforeAll(() => {
    pki = TestPki.create();
  });
  afterAll(() => pki.cleanup());

  it.each([
    ['/C=US/ST=CA/O=Ledgerline/OU=Test/CN=alice', 'CN=alice,OU=Test,O=Ledgerline,ST=CA,C=US'],
    ['/CN=a\\,b\\+c"d<e>f;g=h#i\\\\j', 'CN=a\\,b\\+c\\"d\\<e\\>f\\;g\\=h\\#i\\\\j'],
    ['/O=\\#lead/OU=  two spaces  /CN=x', 'CN=x,OU=\\ \\ two spaces\\ \\ ,O=\\#lead'],
    ['/DC=com/DC=example/O=Ledgerline/CN=svc-orders/UID=u1001', 'UID=u1001,CN=svc-orders,O=Ledgerline,DC=example,DC=com'],
    ['/C=DE/O=Zoë GmbH/CN=Jürgen 日本', 'CN=Jürgen 日本,O=Zoë GmbH,C=DE'],
    ['/CN=bob+UID=b1/emailAddress=bob@example.com', '1.2.840.113549.1.9.1=#160f626f62406578616d706c652e636f6d,CN=bob+UID=b1'],
    ['/serialNumber=42/title=Dr/GN=Grace/SN=Hopper/CN=grace', 'CN=grace,2.5.4.4=#0c06486f70706572,2.5.4.42=#0c054772616365,2.5.4.12=#0c024472,2.5.4.5=#13023432'],
  ])('formats the subject %s as Java prints it: %s', (subject, java) => {
    const cert = pki.client(`subject-${++issued}`, subject);
    expect(distinguishedName(cert.x509)).toBe(java);
    // A PeerCertificate (getPeerCertificate()) carries the same DER in `raw`.
    expect(distinguishedName({ raw: cert.x509.raw } as PeerCertificate)).toBe(java);
  });
});

describe('rfc2253Name', () => {
  it.each([
    ['every character RFC 2253 and Java escape', cn('a,b+c"d\\e<f>g;h=i#j'), 'CN=a\\,b\\+c\\"d\\\\e\\<f\\>g\\;h\\=i\\#j'],
    ['a leading #', cn('#alice'), 'CN=\\#alice'],
    ['leading and trailing spaces, each escaped', cn('  two lead, two trail  '), 'CN=\\ \\ two lead\\, two trail\\ \\ '],
    ['a value of spaces only', cn('   '), 'CN=\\ \\ \\ '],
    ['leading and trailing CR', cn('\rx\r'), 'CN=\\\rx\\\r'],
    ['NUL as \\00', cn('a\0b'), 'CN=a\\00b'],
    ['a newline kept raw', cn('a\nb'), 'CN=a\nb'],
    ['non-ASCII kept raw', cn('Zoë 😀 日本'), 'CN=Zoë 😀 日本'],
    ['a leading byte order mark kept', cn(Buffer.from([0xef, 0xbb, 0xbf, 0x41])), 'CN=\ufeffA'],
    // Java's UTF-8 decoder: C3 28 → one U+FFFD, an encoded surrogate (ED A0 80) → one, a truncated four-byte
    // sequence (F0 9F 98) → one, FF, C0 and AF → one each.
    ['malformed UTF-8 replaced as Java replaces it', cn(Buffer.from([0x41, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf0, 0x9f, 0x98, 0x42, 0xff, 0xc0, 0xaf])), 'CN=A\ufffd(\ufffd\ufffdB\ufffd\ufffd\ufffd'],
    ['PrintableString values', name(rdn(ava('2.5.4.6', PRINTABLE, 'US')), rdn(ava('2.5.4.10', PRINTABLE, 'Acme Inc.'))), 'O=Acme Inc.,C=US'],
    ['a TeletexString decoded as UTF-8, as Java does', cn(Buffer.from([0x61, 0xe9]), 0x14), 'CN=a\ufffd'],
    ['an IA5String', cn('x@y', IA5), 'CN=x@y'],
    ['a BMPString decoded as UTF-8, as Java does', cn(Buffer.from([0, 0x61, 0, 0x62]), 0x1e), 'CN=\\00a\\00b'],
    ['a UniversalString as hex', cn(Buffer.from([0, 0, 0, 0x61]), 0x1c), 'CN=#1c0400000061'],
    ['a VisibleString as hex', cn('vis', 0x1a), 'CN=#1a03766973'],
    ['a NumericString as hex', cn('123', 0x12), 'CN=#1203313233'],
    ['a constructed string as hex', cn(der(UTF8, Buffer.from('x')), 0x2c), 'CN=#2c030c0178'],
    ['an OCTET STRING as hex', cn('raw', 0x04), 'CN=#0403726177'],
    ['emailAddress as its OID and hex DER', name(rdn(ava(CN, UTF8, 'bob')), rdn(ava('1.2.840.113549.1.9.1', IA5, 'bob@example.com'))), '1.2.840.113549.1.9.1=#160f626f62406578616d706c652e636f6d,CN=bob'],
    [
      'the RFC 2253 keywords, and OIDs for the rest',
      name(
        rdn(ava('0.9.2342.19200300.100.1.25', IA5, 'com')),
        rdn(ava('0.9.2342.19200300.100.1.25', IA5, 'example')),
        rdn(ava('2.5.4.9', UTF8, '1 Main St')),
        rdn(ava('2.5.4.7', UTF8, 'Town')),
        rdn(ava('2.5.4.8', UTF8, 'CA')),
        rdn(ava('0.9.2342.19200300.100.1.1', UTF8, 'u1')),
        rdn(ava('2.5.4.5', PRINTABLE, '42')),
        rdn(ava('2.5.4.12', UTF8, 'Dr')),
        rdn(ava('2.5.4.42', UTF8, 'G')),
        rdn(ava('2.5.4.4', UTF8, 'S')),
        rdn(ava('2.5.4.46', PRINTABLE, 'q')),
      ),
      '2.5.4.46=#130171,2.5.4.4=#0c0153,2.5.4.42=#0c0147,2.5.4.12=#0c024472,2.5.4.5=#13023432,UID=u1,ST=CA,L=Town,STREET=1 Main St,DC=example,DC=com',
    ],
    ['multi-valued RDNs joined by + in their DER order', name(rdn(ava('2.5.4.11', UTF8, 'b'), ava('2.5.4.11', UTF8, 'a')), rdn(ava(CN, UTF8, 'x'), ava('0.9.2342.19200300.100.1.1', UTF8, '7'))), 'CN=x+UID=7,OU=b+OU=a'],
    ['an empty RDN as an empty string', name(rdn(ava(CN, UTF8, 'a')), rdn(), rdn(ava('2.5.4.10', UTF8, 'b'))), 'O=b,,CN=a'],
    ['the empty name', name(), ''],
    ['an empty value', cn(''), 'CN='],
    ['an OID with an arc past 2^64', name(rdn(ava('2.999.18446744073709551616.1', UTF8, 'x'))), '2.999.18446744073709551616.1=#0c0178'],
    ['a trailing backslash', cn('a\\'), 'CN=a\\\\'],
    ['a trailing space after an escape', cn('a, '), 'CN=a\\,\\ '],
  ])('%s', (_, nameDer, java) => {
    expect(rfc2253Name(nameDer)).toBe(java);
  });

  it.each([
    ['a truncated name', cn('alice').subarray(0, 10)],
    ['bytes after the name', Buffer.concat([cn('alice'), Buffer.from([0])])],
    ['an indefinite length', Buffer.from([0x30, 0x80, 0x00, 0x00])],
    ['a length of five octets', Buffer.from([0x30, 0x85, 0, 0, 0, 0, 1, 0])],
    ['a length running past its parent', Buffer.from([0x30, 0x03, 0x31, 0x7f, 0x00])],
    ['an RDN that is not a SET', name(der(0x30, ava(CN, UTF8, 'x')))],
    ['an attribute with bytes after its value', name(rdn(der(0x30, oid(CN), der(UTF8, Buffer.from('x')), der(UTF8, Buffer.from('y')))))],
    ['an OID with a useless 0x80 octet', name(rdn(der(0x30, der(0x06, Buffer.from([0x55, 0x80, 0x04])), der(UTF8, Buffer.from('x')))))],
    ['an OID that does not end', name(rdn(der(0x30, der(0x06, Buffer.from([0x55, 0x84])), der(UTF8, Buffer.from('x')))))],
    ['a multi-byte tag', name(rdn(der(0x30, oid(CN), Buffer.from([0x1f, 0x81, 0x01, 0x00]))))],
    ['more than 1024 attributes', name(rdn(...Array.from({ length: 1025 }, () => ava(CN, UTF8, 'x'))))],
  ])('refuses %s', (_, bytes) => {
    expect(() => rfc2253Name(bytes)).toThrow(SslPrincipalError);
  });

  it('refuses a certificate whose TBSCertificate has no subject', () => {
    const tbs = der(0x30, der(0x02, Buffer.from([1])), der(0x30, oid('1.2.840.10045.4.3.2')), name());
    expect(() => distinguishedName({ raw: der(0x30, tbs) } as PeerCertificate)).toThrow(/does not parse/);
  });
});

describe('SslPrincipalMapper (Kafka SslPrincipalMapperTest)', () => {
  it.each([
    'DEFAULT',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/',
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, DEFAULT',
    'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/',
    'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L',
    'RULE:^cn=(.?),ou=(.?),dc=(.?),dc=(.?)$/$1@$2/U',
    'RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/',
    'RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/',
  ])('accepts %s', (rules) => {
    expect(() => SslPrincipalMapper.fromRules(rules)).not.toThrow();
  });

  it.each([
    ['default', 'Invalid rule: `default`, unmatched substring: `default`'],
    ['DEFAUL', 'Invalid rule: `DEFAUL`'],
    ['DEFAULT/L', 'unmatched substring: `/L`'],
    ['DEFAULT/U', 'unmatched substring: `/U`'],
    ['RULE:CN=(.*?),OU=ServiceUsers.*/$1', 'Invalid rule: `RULE:CN=(.*?)`'],
    ['rule:^CN=(.*?),OU=ServiceUsers.*$/$1/', 'Invalid rule: `rule:^CN=(.*?)`'],
    ['RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U', 'unmatched substring: `/U`'],
    ['RULE:^CN=(.*?),OU=ServiceUsers.*$/L', 'Invalid rule: `RULE:^CN=(.*?)`'],
    ['RULE:^CN=(.*?),OU=ServiceUsers.*$/U', 'Invalid rule: `RULE:^CN=(.*?)`'],
    ['RULE:^CN=(.*?),OU=ServiceUsers.*$/LU', 'Invalid rule: `RULE:^CN=(.*?)`'],
  ])('refuses %s as Kafka does', (rules, message) => {
    const refusal = (() => {
      try {
        SslPrincipalMapper.fromRules(rules);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(refusal).toBeInstanceOf(SslPrincipalRuleError);
    expect((refusal as SslPrincipalRuleError).code).toBe('LL_ERR_CONFIG');
    expect((refusal as Error).message).toContain(message);
  });

  it('maps distinguished names with the first rule that matches', () => {
    const mapper = SslPrincipalMapper.fromRules(
      ['RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L', 'RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L', 'RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U', 'RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U', 'DEFAULT'].join(', '),
    );
    expect(mapper.getName('CN=Duke,OU=ServiceUsers,O=Org,C=US')).toBe('duke');
    expect(mapper.getName('CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US')).toBe('duke@sme');
    expect(mapper.getName('cn=duke,ou=sme,dc=mycp,dc=com')).toBe('DUKE@SME');
    expect(mapper.getName('cN=duke,OU=JavaSoft,O=Sun Microsystems')).toBe('DUKE');
    expect(mapper.getName('OU=JavaSoft,O=Sun Microsystems,C=US')).toBe('OU=JavaSoft,O=Sun Microsystems,C=US');
  });

  it.each([
    ['[]', ''],
    ['[DEFAULT]', 'DEFAULT'],
    ['[RULE:/]', 'RULE://'],
    ['[RULE:/.*]', 'RULE:/.*/'],
    ['[RULE:/.*/L]', 'RULE:/.*/L'],
    ['[RULE:/, DEFAULT]', 'RULE://,DEFAULT'],
    ['[RULE:/, DEFAULT]', '  RULE:// ,  DEFAULT  '],
    ['[RULE:   /     , DEFAULT]', '  RULE:   /     / ,  DEFAULT  '],
    ['[RULE:  /     /U, DEFAULT]', '  RULE:  /     /U   ,DEFAULT  '],
    ['[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]', '  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  '],
    ['[]', ',   , , ,      , , ,   '],
    ['[RULE:/, DEFAULT]', ',,RULE://,,,DEFAULT,,'],
    ['[RULE: /   , DEFAULT]', ',  , RULE: /   /    ,,,   DEFAULT, ,   '],
    ['[RULE:   /  /U, DEFAULT]', '     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,'],
    ['[RULE:\\/\\\\\\(\\)\\n\\t/\\/\\/]', 'RULE:\\/\\\\\\(\\)\\n\\t/\\/\\//'],
    ['[RULE:\\**\\/+/*/L, RULE:\\/*\\**/**]', 'RULE:\\**\\/+/*/L,RULE:\\/*\\**/**/'],
    [
      '[RULE:,RULE:,/,RULE:,\\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]',
      'RULE:,RULE:,/,RULE:,\\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT',
    ],
  ])('splits into %s: %j', (expected, rules) => {
    expect(SslPrincipalMapper.fromRules(rules).toString()).toBe(`SslPrincipalMapper(rules = ${expected})`);
  });

  it('keeps an escaped comma in a name (testCommaWithWhitespace)', () => {
    const mapper = SslPrincipalMapper.fromRules('RULE:^CN=((\\\\, *|\\w)+)(,.*|$)/$1/,DEFAULT');
    expect(mapper.getName('CN=Tkac\\, Adam,OU=ITZ,DC=geodis,DC=cz')).toBe('Tkac\\, Adam');
  });

  it('fails a name no rule applies to, as Kafka NoMatchingRule', () => {
    const mapper = SslPrincipalMapper.fromRules('RULE:^CN=(.*?),.*$/$1/');
    expect(() => mapper.getName('O=NoCN')).toThrow(new SslPrincipalError('No rules apply to O=NoCN, rules [RULE:^CN=(.*?),.*$/$1]'));
  });

  it('takes null rules as DEFAULT', () => {
    expect(new SslPrincipalMapper(null).getName('CN=a,O=b')).toBe('CN=a,O=b');
  });
});

describe('SslPrincipalMapper replacements (Kafka 4.4.0)', () => {
  const mapped = (rule: string, dn: string): string => SslPrincipalMapper.fromRules(rule).getName(dn);
  const DN = 'CN=alice,O=x';

  it.each([
    ['a reference past the groups is literal', 'RULE:^CN=([^,]*),.*$/$2/', DN, '$2'],
    ['$12 with one group is $1 then 2', 'RULE:^CN=([^,]*),.*$/$12/', DN, 'alice2'],
    ['$10 with one group is $1 then 0', 'RULE:^CN=([^,]*),.*$/$10/', DN, 'alice0'],
    ['$0 is the whole match', 'RULE:^CN=([^,]*),.*$/$0:$1/', DN, 'CN=alice,O=x:alice'],
    ['$01 is group 1 (Java reads digits while they name a group)', 'RULE:^CN=([^,]*),.*$/$01/', DN, 'alice'],
    ['an escaped $', 'RULE:^CN=([^,]*),.*$/\\$1/', DN, '$1'],
    ['an escaped backslash', 'RULE:^CN=([^,]*),.*$/a\\\\b/', DN, 'a\\b'],
    ['a valid reference, then one past the groups', 'RULE:^CN=([^,]*),.*$/$1$2/', DN, 'alice$2'],
    ['a named group', 'RULE:^CN=(?<user>[^,]*),.*$/${user}@corp/', DN, 'alice@corp'],
    ['two-digit references with eleven groups', 'RULE:^CN=(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k),.*$/$11-$12-$1x/', 'CN=abcdefghijk,O=x', 'k-a2-ax'],
    ['replaceAll also replaces the empty match at the end', 'RULE:.*/x/', 'CN=alice', 'xx'],
    ['the empty match at the end has an empty group', 'RULE:(.*)/[$1]/', 'CN=alice', '[CN=alice][]'],
    ['a lazy pattern replaces every empty match, find() by find()', 'RULE:.*?/x/', 'CN=alice', 'xCxNx=xaxlxixcxex'],
  ])('%s: %s on %s gives %s', (_, rule, dn, expected) => {
    expect(mapped(rule, dn)).toBe(expected);
  });

  it.each([
    ['the second literal reference escaped one character early (Kafka quirk), so $6 is read', 'RULE:^CN=([^,]*),.*$/$5$6/', 'no group 6'],
    ['the early backslash leaves a lone $', 'RULE:^CN=([^,]*),.*$/$5x$6y$7/', 'illegal group reference'],
    ['the early backslash again', 'RULE:^CN=([^,]*),.*$/$2-$3/', 'no group 3'],
    ['a pattern without groups keeps $1 as a reference', 'RULE:^CN=[^,]*,.*$/$1/', 'no group 1'],
    ['an unknown named group', 'RULE:^CN=(?<user>[^,]*),.*$/${nope}/', 'no group with name {nope}'],
    ['a $ at the end', 'RULE:^CN=([^,]*),.*$/x$/', 'group index is missing'],
    ['a $ before a letter', 'RULE:^CN=([^,]*),.*$/$a/', 'illegal group reference'],
    ['a reference past Integer.MAX_VALUE', 'RULE:^CN=([^,]*),.*$/$99999999999/', 'is not an int'],
  ])('fails on %s: %s', (_, rule, message) => {
    expect(() => mapped(rule, DN)).toThrow(SslPrincipalError);
    expect(() => mapped(rule, DN)).toThrow(message);
  });
});

describe('SslPrincipalMapper patterns: Java regular expressions (Kafka 4.4.0)', () => {
  const matches = (rule: string, dn: string): boolean => {
    try {
      SslPrincipalMapper.fromRules(rule).getName(dn);
      return true;
    } catch (e) {
      if (e instanceof SslPrincipalError && e.message.startsWith('No rules apply')) return false;
      throw e;
    }
  };

  it.each([
    ['RULE:(?i)cn=([^,]*).*/$1/', 'CN=Alice,O=x', true],
    ['RULE:(?i)cn=\\u00e9/x/', 'CN=É', false], // CASE_INSENSITIVE is ASCII-only in Java
    ['RULE:(?i)cn=\\u00e9/x/', 'cn=é', true],
    ['RULE:(?i)cn=[a-c]+/x/', 'CN=ABCabc', true],
    ['RULE:(?i)cn=[^a]+/x/', 'CN=bBA', false],
    ['RULE:(?i:cn)=Alice/x/', 'CN=Alice', true],
    ['RULE:(?i:cn)=Alice/x/', 'CN=alice', false],
    ['RULE:cn=(?i)alice|CN=BOB/x/', 'CN=bob', true], // an inline flag lasts past |
    ['RULE:(cn=(?i)alice)|x=y/x/', 'X=Y', false], // ... but not past the end of its group
    ['RULE:CN=(?i)alice(?-i),O=X|o=.*/ok/', 'CN=ALICE,O=x', false],
    ['RULE:^(?s)CN=(.*)$/$1/', 'CN=a\nb', true],
    ['RULE:^CN=(.*)$/$1/', 'CN=a\nb', false], // . stops at a line terminator
    ['RULE:^CN=(.*)$/[$1]/', 'CN=ab\n', false], // $ may precede a final newline, but the whole DN must match
    ['RULE:^CN=.$/m/', 'CN=\u2028', false], // Java's line terminators include U+2028
    ['RULE:^CN=\\s$/m/', 'CN=\u2028', false], // Java's \s is ASCII
    ['RULE:^CN=[^\\s,]+$/m/', 'CN=a\tb', false],
    ['RULE:^CN=\\Q(x)\\E(.*)$/$1/', 'CN=(x)y', true],
    ['RULE:^CN=\\x{1F600}(.*)$/$1/', 'CN=😀b', true],
    ['RULE:^CN=\\012$/nl/', 'CN=\n', true],
    ['RULE:^CN=[]a]+$/m/', 'CN=]a]', true], // a ] first in a class is literal
    ['RULE:^CN=[\\Q-]\\E]+$/m/', 'CN=-]-', true],
    ['RULE:^CN=\\p{Punct}+$/m/', 'CN=!/:@[`{~', true],
    ['RULE:^CN=[\\p{Alpha}_]+$/m/', 'CN=ab_C', true],
    ['RULE:^CN=\\p{IsLu}\\p{Ll}+$/m/', 'CN=Éa', true],
    ['RULE:^CN=\\p{Lower}+$/m/', 'CN=aB', false],
    ['RULE:^CN=a{2,3}$/m/', 'CN=aaa', true],
  ])('%s on %j matches: %s', (rule, dn, expected) => {
    expect(matches(rule, dn)).toBe(expected);
  });

  it('captures a supplementary character as one, as Java does', () => {
    expect(SslPrincipalMapper.fromRules('RULE:^CN=(.)(.*)$/$1|$2/').getName('CN=😀b')).toBe('😀|b');
  });

  it.each([
    ['RULE:^CN=a++$/m/', 'possessive quantifier'],
    ['RULE:^CN=(a)\\1$/m/', 'back reference'],
    ['RULE:^CN=(?>a)$/m/', 'atomic group'],
    ['RULE:^CN=(?x)a$/m/', 'inline flag x'],
    ['RULE:^CN=[a&&b]$/m/', 'intersection'],
    ['RULE:^CN=[a[b]]$/m/', 'union'],
    ['RULE:^CN=\\p{InGreek}$/m/', 'InGreek'],
    ['RULE:(?i)^CN=\\p{Lower}$/m/', 'under (?i)'],
    ['RULE:^CN=(unclosed$/m/', 'unclosed group'],
    ['RULE:^CN=a{2$/m/', 'illegal repetition'],
  ])('refuses %s (%s) when the mapper is made', (rule, message) => {
    expect(() => SslPrincipalMapper.fromRules(rule)).toThrow(SslPrincipalRuleError);
    expect(() => SslPrincipalMapper.fromRules(rule)).toThrow(message);
  });
});

describe('sslPrincipal', () => {
  let pki: TestPki;
  beforeAll(() => {
    pki = TestPki.create();
  });
  afterAll(() => pki.cleanup());

  it('is User:ANONYMOUS without a client certificate, as DefaultKafkaPrincipalBuilder', () => {
    const mapper = new SslPrincipalMapper('DEFAULT');
    expect(sslPrincipal(undefined, mapper)).toBe(ANONYMOUS);
    expect(sslPrincipal({} as PeerCertificate, mapper)).toBe(ANONYMOUS);
  });

  it('is User: the mapped distinguished name of the certificate', () => {
    const alice = pki.client('alice', '/C=US/ST=CA/O=Ledgerline/OU=Test/CN=alice');
    expect(sslPrincipal(alice.x509, new SslPrincipalMapper('DEFAULT'))).toEqual({ type: 'User', name: 'CN=alice,OU=Test,O=Ledgerline,ST=CA,C=US' });
    expect(sslPrincipal(alice.x509, new SslPrincipalMapper('RULE:^CN=([^,]+),OU=Test,.*$/$1/U,DEFAULT'))).toEqual({ type: 'User', name: 'ALICE' });
    expect(() => sslPrincipal(alice.x509, new SslPrincipalMapper('RULE:^CN=([^,]+),OU=Prod,.*$/$1/'))).toThrow(SslPrincipalError);
  });
});
