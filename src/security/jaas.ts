/**
 * `sasl.jaas.config` values, parsed by the rules of Kafka's JaasConfig (clients/.../security/JaasConfig.java),
 * which reads them with java.io.StreamTokenizer:
 *
 *   <LoginModuleClassName> <required|requisite|sufficient|optional> key1="value1" key2=value2 ... ;  (repeatable)
 *
 * The tokenizer is reproduced here, with JaasConfig's syntax table, because its quirks decide which values parse:
 *   - words are runs of letters, U+00A0-U+00FF, any code unit from U+0100 up, `_`, `$`, and (after the first
 *     character) digits, `.` and `-`: `org.apache.kafka.common.security.plain.PlainLoginModule` is one word;
 *   - a token that starts with a digit, `.` or `-` followed by a digit is a number, which has no text: `key=3` and
 *     `key=-1` are refused ("Value not specified"), `key="3"` is fine;
 *   - `"..."` and `'...'` are strings with Java escapes (`\n`, `\t`, `\b`, `\f`, `\r`, `\a`, `\v`, octal `\0`-`\377`;
 *     any other escaped character stands for itself, so `\"` and `\\`); a string ends at its closing quote or,
 *     without an error, at the end of the line or input;
 *   - `//` and `/* ... *\/` are comments; so is a lone `/`, up to the end of the line (it is StreamTokenizer's
 *     default comment character), which is why a path must be quoted;
 *   - code units 0-32 are whitespace; anything else (`=`, `;`, `{`, `,`, ...) is a token of its own.
 * Control flags are case-insensitive. A key given twice keeps its last value (JaasConfig puts options in a map).
 *
 * Differences from Kafka, both to refuse what Kafka takes by accident:
 *   - an option name that is not a word or string (`123="x"`) is refused; Kafka stores it under a null key;
 *   - an entry without a login module name (`"" required;`) is refused with a message; Kafka's
 *     AppConfigurationEntry throws an IllegalArgumentException without one.
 *
 * `parseSaslJaasConfig` adds the rule of Kafka's JaasContext.load for the `sasl.jaas.config` property: exactly one
 * login module. (JaasContext's list of disallowed Java login modules, `org.apache.kafka.disallowed.login.modules`,
 * has no meaning here: Ledgerline loads no login module classes, it only reads the options of the ones it knows.)
 *
 * Error messages are Kafka's and name keys, never values: a JAAS config holds passwords.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';

/** javax.security.auth.login.AppConfigurationEntry.LoginModuleControlFlag, lower-cased. */
export type JaasControlFlag = 'required' | 'requisite' | 'sufficient' | 'optional';

/** One login module of a JAAS config: javax.security.auth.login.AppConfigurationEntry. */
export interface JaasConfigEntry {
  readonly loginModule: string;
  readonly flag: JaasControlFlag;
  readonly options: ReadonlyMap<string, string>;
}

/** A JAAS config that does not parse (Kafka's IllegalArgumentException from JaasConfig / JaasContext). */
export class JaasConfigError extends LedgerlineError {
  constructor(message: string) {
    super('LL_ERR_CONFIG', ErrorCode.INVALID_CONFIG, message);
  }
}

/** Every login module entry of `text`, in order. Throws JaasConfigError. */
export function parseJaasConfig(text: string): JaasConfigEntry[] {
  const tokens = new Tokenizer(text);
  const entries: JaasConfigEntry[] = [];
  for (let t = tokens.next(); t.kind !== 'eof'; t = tokens.next()) entries.push(parseEntry(t, tokens));
  if (entries.length === 0) throw new JaasConfigError('Login module not specified in JAAS config');
  return entries;
}

/** The one login module of a `sasl.jaas.config` property value, as Kafka's JaasContext.load requires. */
export function parseSaslJaasConfig(text: string): JaasConfigEntry {
  const entries = parseJaasConfig(text);
  if (entries.length !== 1) throw new JaasConfigError(`JAAS config property contains ${entries.length} login modules, should be 1 module`);
  return entries[0];
}

function parseEntry(first: Token, tokens: Tokenizer): JaasConfigEntry {
  const loginModule = textOf(first);
  let t = tokens.next();
  if (t.kind === 'eof') throw new JaasConfigError('Login module control flag not specified in JAAS config');
  const flag = controlFlag(textOf(t));
  const options = new Map<string, string>();
  for (t = tokens.next(); t.kind !== 'eof' && !isChar(t, ';'); t = tokens.next()) {
    const key = textOf(t);
    if (key === undefined) throw new JaasConfigError('Option name not specified in JAAS config: an option name is a word or a quoted string');
    if (!isChar(tokens.next(), '=')) throw valueNotSpecified(key);
    const valueToken = tokens.next();
    const value = textOf(valueToken);
    if (value === undefined) throw valueNotSpecified(key, valueToken);
    options.set(key, value);
  }
  if (!isChar(t, ';')) throw new JaasConfigError('JAAS config entry not terminated by semi-colon');
  if (!loginModule) throw new JaasConfigError('Login module name not specified in JAAS config');
  return { loginModule, flag, options };
}

function controlFlag(text: string | undefined): JaasControlFlag {
  if (text === undefined) throw new JaasConfigError('Login module control flag is not available in the JAAS config');
  // Java's toUpperCase(Locale.ROOT) and JavaScript's toUpperCase agree (both map dotless ı to I, ſ to S).
  switch (text.toUpperCase()) {
    case 'REQUIRED':
      return 'required';
    case 'REQUISITE':
      return 'requisite';
    case 'SUFFICIENT':
      return 'sufficient';
    case 'OPTIONAL':
      return 'optional';
    default:
      throw new JaasConfigError(`Invalid login module control flag '${text}' in JAAS config`);
  }
}

function valueNotSpecified(key: string, token?: Token): JaasConfigError {
  const hint = token?.kind === 'number' || (token !== undefined && isChar(token, '-')) ? " (quote a value that starts with a digit, '.' or '-')" : '';
  return new JaasConfigError(`Value not specified for key '${key}' in JAAS config${hint}`);
}

// ---- java.io.StreamTokenizer, with the syntax table JaasConfig gives it ----

/** A token: `text` is StreamTokenizer's `sval` (a word's or quoted string's text; numbers and other characters have none). */
type Token =
  | { readonly kind: 'eof' }
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'quoted'; readonly text: string }
  | { readonly kind: 'number' }
  | { readonly kind: 'char'; readonly char: string };

function textOf(t: Token): string | undefined {
  return t.kind === 'word' || t.kind === 'quoted' ? t.text : undefined;
}

function isChar(t: Token, char: string): boolean {
  return t.kind === 'char' && t.char === char;
}

const EOF = -1;
const CR = 0x0d;
const LF = 0x0a;
const SLASH = 0x2f;
const STAR = 0x2a;
const BACKSLASH = 0x5c;
const MINUS = 0x2d;
const DOT = 0x2e;

const WHITESPACE = 1;
const DIGIT = 2;
const ALPHA = 4;
const QUOTE = 8;

/**
 * The character classes of code units below 256: StreamTokenizer's defaults (wordChars a-z, A-Z, 160-255;
 * whitespaceChars 0-32; commentChar '/'; quoteChar '"' and '\''; parseNumbers: 0-9 . -) plus JaasConfig's
 * wordChars '-', '_', '$'. `-` is both a digit and a word character. '/' is handled by the comment rules.
 */
const CTYPE = (() => {
  const t = new Uint8Array(256);
  const add = (from: string, to: string, cls: number): void => {
    for (let c = from.charCodeAt(0); c <= to.charCodeAt(0); c++) t[c] |= cls;
  };
  add('a', 'z', ALPHA);
  add('A', 'Z', ALPHA);
  add('\u00a0', '\u00ff', ALPHA);
  add('\u0000', ' ', WHITESPACE);
  add('"', '"', QUOTE);
  add("'", "'", QUOTE);
  add('0', '9', DIGIT);
  add('.', '.', DIGIT);
  add('-', '-', DIGIT | ALPHA);
  add('_', '_', ALPHA);
  add('$', '$', ALPHA);
  return t;
})();

function ctype(c: number): number {
  return c < 256 ? CTYPE[c] : ALPHA;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isOctal(c: number): boolean {
  return c >= 0x30 && c <= 0x37;
}

/** StreamTokenizer's one-letter escapes; any other escaped character stands for itself. */
const ESCAPES: ReadonlyMap<number, number> = new Map(
  Object.entries({ a: 0x07, b: 0x08, f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b }).map(([k, v]) => [k.charCodeAt(0), v]),
);

/** StreamTokenizer.nextToken over UTF-16 code units, as Java reads a String. */
class Tokenizer {
  private pos = 0;

  constructor(private readonly s: string) {}

  next(): Token {
    for (;;) {
      let c = this.read();
      while (c !== EOF && ctype(c) & WHITESPACE) c = this.read();
      if (c === EOF) return { kind: 'eof' };
      const ct = ctype(c);

      if (ct & DIGIT) {
        if (c === MINUS) {
          c = this.read();
          if (c !== DOT && !isDigit(c)) {
            this.unread(c);
            return { kind: 'char', char: '-' };
          }
        }
        let seenDot = false;
        while ((c === DOT && !seenDot) || isDigit(c)) {
          if (c === DOT) seenDot = true;
          c = this.read();
        }
        this.unread(c);
        return { kind: 'number' };
      }

      if (ct & ALPHA) {
        const start = this.pos - 1;
        do c = this.read();
        while (c !== EOF && ctype(c) & (ALPHA | DIGIT));
        this.unread(c);
        return { kind: 'word', text: this.s.slice(start, this.pos) };
      }

      if (ct & QUOTE) return { kind: 'quoted', text: this.quoted(c) };

      if (c === SLASH) {
        c = this.read();
        if (c === STAR) {
          if (!this.skipBlockComment()) return { kind: 'eof' };
        } else {
          // `//`, or a lone '/' (the default comment character): the rest of the line. Like Java, the character
          // after a lone '/' is not looked at, so "/\n" also hides the next line.
          do c = this.read();
          while (c !== LF && c !== CR && c !== EOF);
          this.unread(c);
        }
        continue;
      }

      return { kind: 'char', char: String.fromCharCode(c) };
    }
  }

  /** The text of a string opened by `quote`, up to its closing quote, a line end (left for the next token) or EOF. */
  private quoted(quote: number): string {
    let text = '';
    let d = this.read();
    while (d !== EOF && d !== quote && d !== LF && d !== CR) {
      let c: number;
      if (d === BACKSLASH) {
        c = this.read();
        const first = c;
        if (isOctal(c)) {
          // Up to three octal digits, the third only after a first digit of 0-3 (\377 is the largest).
          c -= 0x30;
          d = this.read();
          if (isOctal(d)) {
            c = (c << 3) + (d - 0x30);
            d = this.read();
            if (isOctal(d) && first <= 0x33) {
              c = (c << 3) + (d - 0x30);
              d = this.read();
            }
          }
        } else {
          c = ESCAPES.get(c) ?? c;
          d = this.read();
        }
      } else {
        c = d;
        d = this.read();
      }
      // A backslash at the end of the input stores (char) -1, U+FFFF, as Java does; the entry fails anyway.
      text += String.fromCharCode(c & 0xffff);
    }
    if (d !== quote) this.unread(d);
    return text;
  }

  /**
   * Skips a block comment after its `/*`; false if the input ends first. Java's loop does not test the character
   * that follows a line end against the closing `*\/`, which this keeps.
   */
  private skipBlockComment(): boolean {
    let prev = 0;
    for (;;) {
      let c = this.read();
      if (c === SLASH && prev === STAR) return true;
      if (c === CR) {
        c = this.read();
        if (c === LF) c = this.read();
      } else if (c === LF) {
        c = this.read();
      }
      if (c === EOF) return false;
      prev = c;
    }
  }

  private read(): number {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos++) : EOF;
  }

  /** Gives back the last character read (StreamTokenizer's `peekc`). */
  private unread(c: number): void {
    if (c !== EOF) this.pos--;
  }
}
