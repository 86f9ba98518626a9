/**
 * The principal of a TLS client certificate, as Kafka's DefaultKafkaPrincipalBuilder builds it on an SSL listener:
 *
 *   no client certificate (ssl.client.auth=none, or requested and none sent)  →  User:ANONYMOUS
 *   a verified certificate  →  User:<ssl.principal.mapping.rules applied to the subject's distinguished name>
 *
 * `ssl.principal.mapping.rules` (KIP-371) is Kafka's SslPrincipalMapper: a comma-separated list of `DEFAULT`
 * (the DN itself) and `RULE:pattern/replacement/` with an optional `L` or `U` (lower/upper-case the result);
 * the first rule whose pattern matches the whole DN gives the name, and a DN no rule matches fails the
 * connection (Kafka's NoMatchingRule). The rules are split and parsed with SslPrincipalMapper's own regular
 * expressions (so the odd rule strings Kafka accepts are accepted alike), a back reference past the pattern's
 * groups is kept literal as Kafka's escapeLiteralBackReferences keeps it (with the same offset quirk when there
 * are several), and the replacement is expanded as Java's Matcher.replaceAll expands it (`$n`, `${name}`, `\x`).
 *
 * The subject's text is distinguished-name.ts's; the rule patterns are Java regular expressions, translated by
 * java-regex.ts.
 */
import type { X509Certificate } from 'node:crypto';
import type { PeerCertificate } from 'node:tls';
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';
import { ANONYMOUS, type Principal } from '../api/services.js';
import { distinguishedName, SslPrincipalError } from './distinguished-name.js';
import { translateJavaRegex, type JavaPattern } from './java-regex.js';

export { SslPrincipalError };

// ---------------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------------

/** `ssl.principal.mapping.rules` does not parse (Kafka: IllegalArgumentException when the listener starts). */
export class SslPrincipalRuleError extends LedgerlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LL_ERR_CONFIG', ErrorCode.INVALID_CONFIG, `ssl.principal.mapping.rules: ${message}`, options);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// ssl.principal.mapping.rules: Kafka's SslPrincipalMapper
// ---------------------------------------------------------------------------------------------------------------

/**
 * SslPrincipalMapper.RULE_PATTERN and RULE_SPLITTER (Java source, in Java's meaning: `\s` is [ \t\n\x0B\f\r],
 * `.` excludes Java's line terminators, `$` may precede a final one), translated once.
 */
const RULE_PATTERN = String.raw`(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)`;
const RULE_SPLITTER_JS = new RegExp(translateJavaRegex(String.raw`\s*(` + RULE_PATTERN + String.raw`)\s*(,\s*|$)`).source, 'gu');
const RULE_PARSER_JS = new RegExp(`^(?:${translateJavaRegex(RULE_PATTERN).source})`, 'u');
/** Rule.BACK_REFERENCE_PATTERN. */
const BACK_REFERENCE = /\$(\d+)/g;

/** Java's String.trim(): strips every character up to U+0020 from both ends. */
function javaTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return s.slice(start, end);
}

/** One rule: DEFAULT, or RULE:pattern/replacement/[L|U]. */
class Rule {
  private readonly whole: RegExp | null = null;
  private readonly global: RegExp | null = null;
  private readonly groupCount: number = 0;
  private readonly names: ReadonlySet<string> = new Set();

  constructor(
    readonly pattern: string | null,
    readonly replacement: string | null,
    readonly toLowerCase: boolean,
    readonly toUpperCase: boolean,
  ) {
    if (pattern === null) return;
    let translated: JavaPattern;
    try {
      translated = translateJavaRegex(pattern);
      this.whole = new RegExp(`^(?:${translated.source})(?![\\s\\S])`, 'u');
      this.global = new RegExp(translated.source, 'gu');
    } catch (e) {
      throw new SslPrincipalRuleError(`the pattern of rule ${this} cannot be used: ${(e as Error).message}`, { cause: e });
    }
    this.groupCount = translated.groupCount;
    this.names = translated.names;
  }

  static readonly DEFAULT = new Rule(null, null, false, false);

  /** The principal name this rule gives `dn`, or null when its pattern does not match all of `dn`. */
  apply(dn: string): string | null {
    if (this === Rule.DEFAULT) return dn;
    if (!this.whole!.test(dn)) return null;
    const replacement = escapeLiteralBackReferences(this.replacement!, this.groupCount);
    const result = javaReplaceAll(dn, this.global!, replacement, this.groupCount, this.names);
    // Locale.ENGLISH case mapping is the locale-independent one.
    return this.toLowerCase ? result.toLowerCase() : this.toUpperCase ? result.toUpperCase() : result;
  }

  /** Rule.toString(), which Kafka's tests (and its log lines) show. */
  toString(): string {
    if (this.pattern === null) return 'DEFAULT';
    return `RULE:${this.pattern}${this.replacement !== null ? `/${this.replacement}` : ''}${this.toLowerCase ? '/L' : this.toUpperCase ? '/U' : ''}`;
  }
}

/**
 * Rule.escapeLiteralBackReferences: `$n` past the pattern's groups (after dropping trailing digits while the
 * number is 10 or more and still too large) gets a backslash, so Java's replaceAll writes it literally. As in
 * Kafka, the positions come from the original replacement while the backslashes go into the copy being built, so
 * the second and later insertions land one character early per earlier insertion.
 */
function escapeLiteralBackReferences(unescaped: string, groupCount: number): string {
  if (groupCount === 0) return unescaped;
  let value = unescaped;
  for (const m of unescaped.matchAll(BACK_REFERENCE)) {
    const digits = m[1]!;
    if (digits.startsWith('0')) continue;
    if (digits.length > 10 || Number(digits) > 0x7fffffff) throw new SslPrincipalError(`replacement back reference $${digits} is not an int (Java's NumberFormatException)`);
    let index = Number(digits);
    while (index > groupCount && index >= 10) index = Math.floor(index / 10);
    if (index > groupCount) {
      const groupStart = m.index + 1;
      value = `${value.slice(0, groupStart - 1)}\\${value.slice(groupStart - 1)}`;
    }
  }
  return value;
}

/** Java's `Matcher.replaceAll(replacement)`: every match of `global` in `input` replaced by the expanded replacement. */
function javaReplaceAll(input: string, global: RegExp, replacement: string, groupCount: number, names: ReadonlySet<string>): string {
  let out = '';
  let last = 0;
  global.lastIndex = 0;
  for (let m = global.exec(input); m !== null; m = global.exec(input)) {
    out += input.slice(last, m.index) + expandReplacement(replacement, m, groupCount, names);
    last = m.index + m[0].length;
    // After an empty match Java's find() resumes one char (UTF-16 unit) further, as here.
    if (m[0].length === 0) global.lastIndex = m.index + 1;
    if (global.lastIndex > input.length) break;
  }
  return out + input.slice(last);
}

/** Matcher.appendExpandedReplacement: `\x` is x, `$n` (as many digits as name a group) and `${name}` are groups. */
function expandReplacement(replacement: string, m: RegExpExecArray, groupCount: number, names: ReadonlySet<string>): string {
  let out = '';
  let i = 0;
  while (i < replacement.length) {
    const c = replacement[i]!;
    if (c === '\\') {
      i++;
      if (i === replacement.length) throw new SslPrincipalError('replacement: character to be escaped is missing');
      out += replacement[i++];
    } else if (c === '$') {
      i++;
      if (i === replacement.length) throw new SslPrincipalError('replacement: illegal group reference: group index is missing');
      let group: string | undefined;
      if (replacement[i] === '{') {
        const name = /^\{([a-zA-Z0-9]*)/.exec(replacement.slice(i))![1]!;
        if (name.length === 0) throw new SslPrincipalError('replacement: named capturing group has 0 length name');
        if (replacement[i + 1 + name.length] !== '}') throw new SslPrincipalError("replacement: named capturing group is missing trailing '}'");
        if (/^[0-9]/.test(name)) throw new SslPrincipalError(`replacement: capturing group name {${name}} starts with digit character`);
        if (!names.has(name)) throw new SslPrincipalError(`replacement: no group with name {${name}}`);
        group = m.groups?.[name];
        i += name.length + 2;
      } else {
        let ref = replacement.charCodeAt(i) - 48;
        if (ref < 0 || ref > 9) throw new SslPrincipalError('replacement: illegal group reference');
        i++;
        for (; i < replacement.length; i++) {
          const digit = replacement.charCodeAt(i) - 48;
          if (digit < 0 || digit > 9 || ref * 10 + digit > groupCount) break;
          ref = ref * 10 + digit;
        }
        if (ref > groupCount) throw new SslPrincipalError(`replacement: no group ${ref}`);
        group = m[ref];
      }
      if (group !== undefined) out += group;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * Kafka's SslPrincipalMapper: `ssl.principal.mapping.rules` (null: `DEFAULT`). The constructor throws
 * SslPrincipalRuleError for rules Kafka refuses; getName throws SslPrincipalError when no rule applies.
 */
export class SslPrincipalMapper {
  private readonly rules: readonly Rule[];

  constructor(rules: string | null) {
    this.rules = parseRules(splitRules(rules ?? 'DEFAULT'));
  }

  static fromRules(rules: string | null): SslPrincipalMapper {
    return new SslPrincipalMapper(rules);
  }

  /** The principal name of a distinguished name: the result of the first rule that matches it. */
  getName(distinguishedName: string): string {
    for (const rule of this.rules) {
      const name = rule.apply(distinguishedName);
      if (name !== null) return name;
    }
    throw new SslPrincipalError(`No rules apply to ${distinguishedName}, rules [${this.rules.join(', ')}]`);
  }

  toString(): string {
    return `SslPrincipalMapper(rules = [${this.rules.join(', ')}])`;
  }
}

/** SslPrincipalMapper.splitRules: every RULE_SPLITTER match's first group, Java find() by find(). */
function splitRules(rules: string): string[] {
  const out: string[] = [];
  const input = javaTrim(rules);
  const splitter = new RegExp(RULE_SPLITTER_JS.source, RULE_SPLITTER_JS.flags);
  for (let m = splitter.exec(input); m !== null; m = splitter.exec(input)) {
    out.push(m[1]!);
    if (m[0].length === 0) splitter.lastIndex = m.index + 1;
    if (splitter.lastIndex > input.length) break;
  }
  return out;
}

/** SslPrincipalMapper.parseRules: each must match RULE_PATTERN to its end; empty ones are dropped. */
function parseRules(rules: readonly string[]): Rule[] {
  const out: Rule[] = [];
  for (const rule of rules) {
    const m = RULE_PARSER_JS.exec(rule)!; // the last alternative matches anything, as in Java
    if (m[0].length !== rule.length) throw new SslPrincipalRuleError(`Invalid rule: \`${rule}\`, unmatched substring: \`${rule.slice(m[0].length)}\``);
    if (m[1] !== undefined) out.push(Rule.DEFAULT);
    else if (m[2] !== undefined) out.push(new Rule(m[2], m[4]!, m[6] === 'L', m[6] === 'U'));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The principal
// ---------------------------------------------------------------------------------------------------------------

/**
 * The principal of a connection on an SSL listener (DefaultKafkaPrincipalBuilder): ANONYMOUS without a client
 * certificate (`undefined`, or the `{}` getPeerCertificate() returns then), else `User:` the mapped subject.
 * Pass only a certificate the TLS layer verified (tls.ts, verifiedClientCertificate).
 */
export function sslPrincipal(cert: X509Certificate | PeerCertificate | undefined, mapper: SslPrincipalMapper): Principal {
  if (!cert || !cert.raw || cert.raw.length === 0) return ANONYMOUS;
  return { type: 'User', name: mapper.getName(distinguishedName(cert)) };
}
