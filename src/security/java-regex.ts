/**
 * Java regular expressions (java.util.regex.Pattern) as JavaScript ones that match alike, for the patterns of
 * `ssl.principal.mapping.rules` (principal.ts), which Kafka compiles with Java.
 *
 * Translated to JavaScript patterns that match alike: `u` mode (a character
 * is a code point, as in Java), and Java's meaning of `.`, `$`, `\s`, `\h`, `\v`, `\R`, `\A`, `\Z`, `\z`, `\Q..\E`,
 * octal and `\x{..}` escapes, POSIX `\p{Alpha}`-style classes, and the inline flags `(?i)` (ASCII-only, as Java's
 * CASE_INSENSITIVE without UNICODE_CASE: spelled out as character classes) and `(?s)`. What JavaScript cannot
 * match alike is refused when the mapper is made, with the rule named, rather than matched differently:
 * possessive quantifiers, atomic groups, back references (Java's fail where their group took no part,
 * JavaScript's match the empty string), class unions and intersections, `\p{..}` other than POSIX classes and
 * general categories, `\G`, `\X`, and the flags other than i and s. Two differences remain: `\b` is ASCII here,
 * as in Java 19 and later, where Java 17's also counts non-ASCII letters and digits as word characters; and
 * `\p{Lu}`-style categories follow Node's Unicode version, not the JDK's (Unicode 13 in Java 17, 15 in Java 21).
 */

// ---------------------------------------------------------------------------------------------------------------
// Java regular expressions in JavaScript
// ---------------------------------------------------------------------------------------------------------------

/** Java's `.` without DOTALL: anything but its line terminators. */
const JAVA_DOT = '[^\\n\\r\\u0085\\u2028\\u2029]';
/** Java's `$` without MULTILINE: the end, or before a line terminator that ends the input (not inside CRLF). */
const JAVA_DOLLAR = '(?=(?:\\r\\n|(?<!\\r)\\n|[\\r\\u0085\\u2028\\u2029])?(?![\\s\\S]))';
/** Class contents of Java's \s, \h and \v. */
const JAVA_SPACE = '\\t\\n\\x0B\\f\\r ';
const JAVA_HSPACE = ' \\t\\xA0\\u1680\\u180E\\u2000-\\u200A\\u202F\\u205F\\u3000';
const JAVA_VSPACE = '\\n\\x0B\\f\\r\\x85\\u2028\\u2029';

export interface JavaPattern {
  /** JavaScript source, for the `u` flag. */
  readonly source: string;
  /** Capturing groups (Java's Matcher.groupCount()). */
  readonly groupCount: number;
  /** Names of the named groups. */
  readonly names: ReadonlySet<string>;
}

export class JavaRegexError extends Error {}

function unsupported(what: string, at: number): JavaRegexError {
  return new JavaRegexError(`${what} at index ${at} is not supported (a Java construct JavaScript cannot match alike)`);
}

/**
 * What a backslash escape stands for: literal characters (one, or the run of `\Q...\E`), a character class
 * (its text outside a class and inside one), or an assertion or group that only stands outside a class.
 */
type Escape =
  | { readonly kind: 'chars'; readonly cps: readonly number[] }
  | { readonly kind: 'class'; readonly outside: string; readonly inside: string | null }
  | { readonly kind: 'other'; readonly outside: string };

/** One code point as a `u`-mode pattern character, the same outside and inside a class. */
function lit(cp: number): string {
  return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) ? String.fromCharCode(cp) : `\\u{${cp.toString(16)}}`;
}

const isUpper = (cp: number): boolean => cp >= 0x41 && cp <= 0x5a;
const isLower = (cp: number): boolean => cp >= 0x61 && cp <= 0x7a;

/** Java's POSIX character classes (US-ASCII), as class contents. */
const POSIX_CLASSES: ReadonlyMap<string, string> = new Map([
  ['Lower', 'a-z'],
  ['Upper', 'A-Z'],
  ['ASCII', '\\x00-\\x7F'],
  ['Alpha', 'a-zA-Z'],
  ['Digit', '0-9'],
  ['Alnum', 'a-zA-Z0-9'],
  ['Punct', '\\x21-\\x2F\\x3A-\\x40\\x5B-\\x60\\x7B-\\x7E'],
  ['Graph', '\\x21-\\x7E'],
  ['Print', '\\x20-\\x7E'],
  ['Blank', ' \\t'],
  ['Cntrl', '\\x00-\\x1F\\x7F'],
  ['XDigit', '0-9a-fA-F'],
  ['Space', JAVA_SPACE],
]);
const GENERAL_CATEGORY = /^(?:[CLMNPSZ]|Cc|Cf|Cn|Co|Cs|Ll|Lm|Lo|Lt|Lu|Mc|Me|Mn|Nd|Nl|No|Pc|Pd|Pe|Pf|Pi|Po|Ps|Sc|Sk|Sm|So|Zl|Zp|Zs)$/;

/**
 * `\p{..}` / `\P{..}` after the backslash at `at - 1`: the POSIX classes and the Unicode general categories
 * (`\pL`, `\p{Lu}`, `\p{IsLu}`, `\p{gc=Lu}`). Not under CASE_INSENSITIVE, where Java widens some of them.
 */
function property(java: string, at: number, caseInsensitive: boolean): [Escape, number] {
  const negated = java[at] === 'P';
  const braced = /^\{([^}]*)\}/.exec(java.slice(at + 1, at + 64));
  const name = braced ? braced[1]! : java[at + 1] ?? '';
  const next = at + 1 + (braced ? braced[0].length : 1);
  if (caseInsensitive) throw unsupported(`\\${java[at]}{${name}} under (?i)`, at - 1);
  const posix = POSIX_CLASSES.get(name);
  if (posix !== undefined) return [{ kind: 'class', outside: `[${negated ? '^' : ''}${posix}]`, inside: negated ? null : posix }, next];
  const category = /^(?:Is|gc=|general_category=)?(.*)$/.exec(name)![1]!;
  if (!GENERAL_CATEGORY.test(category)) throw unsupported(`\\${java[at]}{${name}}`, at - 1);
  const text = `\\${negated ? 'P' : 'p'}{${category}}`;
  return [{ kind: 'class', outside: text, inside: text }, next];
}

/** Reads the escape whose backslash is at `at - 1`: [what it is, the index after it]. */
function readEscape(java: string, at: number, caseInsensitive: boolean): [Escape, number] {
  const c = java[at];
  if (c === undefined) throw new JavaRegexError('trailing backslash');
  const one = (cp: number, next: number): [Escape, number] => [{ kind: 'chars', cps: [cp] }, next];
  const cls = (outside: string, inside: string | null): [Escape, number] => [{ kind: 'class', outside, inside }, at + 1];
  switch (c) {
    case 't': return one(0x09, at + 1);
    case 'n': return one(0x0a, at + 1);
    case 'r': return one(0x0d, at + 1);
    case 'f': return one(0x0c, at + 1);
    case 'a': return one(0x07, at + 1);
    case 'e': return one(0x1b, at + 1);
    case 'd': case 'D': case 'w': case 'W': return cls(`\\${c}`, `\\${c}`); // ASCII in both without UNICODE_CHARACTER_CLASS
    case 's': return cls(`[${JAVA_SPACE}]`, JAVA_SPACE);
    case 'h': return cls(`[${JAVA_HSPACE}]`, JAVA_HSPACE);
    case 'v': return cls(`[${JAVA_VSPACE}]`, JAVA_VSPACE);
    case 'S': return cls(`[^${JAVA_SPACE}]`, null);
    case 'H': return cls(`[^${JAVA_HSPACE}]`, null);
    case 'V': return cls(`[^${JAVA_VSPACE}]`, null);
    case 'b': case 'B': return [{ kind: 'other', outside: `\\${c}` }, at + 1];
    case 'A': return [{ kind: 'other', outside: '(?<![\\s\\S])' }, at + 1];
    case 'z': return [{ kind: 'other', outside: '(?![\\s\\S])' }, at + 1];
    case 'Z': return [{ kind: 'other', outside: JAVA_DOLLAR }, at + 1];
    case 'R': return [{ kind: 'other', outside: `(?:\\r\\n|[${JAVA_VSPACE}])` }, at + 1];
    case 'Q': {
      const end = java.indexOf('\\E', at + 1);
      const text = end === -1 ? java.slice(at + 1) : java.slice(at + 1, end);
      return [{ kind: 'chars', cps: [...text].map((ch) => ch.codePointAt(0)!) }, end === -1 ? java.length : end + 2];
    }
    case 'c': {
      const x = java.codePointAt(at + 1);
      if (x === undefined) throw new JavaRegexError('\\c without a control character');
      return one(x ^ 64, at + 1 + (x > 0xffff ? 2 : 1));
    }
    case '0': {
      // \0n, \0nn, \0mnn (m <= 3)
      const m = /^(?:[0-3][0-7]{2}|[0-7]{1,2})/.exec(java.slice(at + 1, at + 4));
      if (!m) throw new JavaRegexError(`illegal octal escape at index ${at - 1}`);
      return one(parseInt(m[0], 8), at + 1 + m[0].length);
    }
    case 'x': {
      const braced = /^\{([0-9a-fA-F]{1,8})\}/.exec(java.slice(at + 1, at + 12));
      if (braced) {
        const cp = parseInt(braced[1]!, 16);
        if (cp > 0x10ffff) throw new JavaRegexError(`hexadecimal code point out of range at index ${at - 1}`);
        return one(cp, at + 1 + braced[0].length);
      }
      if (!/^[0-9a-fA-F]{2}$/.test(java.slice(at + 1, at + 3))) throw new JavaRegexError(`illegal hexadecimal escape at index ${at - 1}`);
      return one(parseInt(java.slice(at + 1, at + 3), 16), at + 3);
    }
    case 'u': {
      const h = java.slice(at + 1, at + 5);
      if (!/^[0-9a-fA-F]{4}$/.test(h)) throw new JavaRegexError(`illegal unicode escape at index ${at - 1}`);
      const cp = parseInt(h, 16);
      // As Java's u(): a high surrogate escape followed by a low surrogate escape is one code point.
      const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})/.exec(java.slice(at + 5, at + 11));
      if (cp >= 0xd800 && cp <= 0xdbff && low) return one(0x10000 + ((cp - 0xd800) << 10) + (parseInt(low[1]!, 16) - 0xdc00), at + 11);
      return one(cp, at + 5);
    }
  }
  if (c === 'p' || c === 'P') return property(java, at, caseInsensitive);
  if (c >= '1' && c <= '9') throw unsupported('a back reference', at - 1);
  if (c === 'k') throw unsupported('a named back reference', at - 1);
  if (/[a-zA-Z]/.test(c)) throw unsupported(`\\${c}`, at - 1);
  // A backslash before anything else quotes it.
  const cp = java.codePointAt(at)!;
  return one(cp, at + (cp > 0xffff ? 2 : 1));
}

/**
 * Translates a Java regular expression (java.util.regex.Pattern syntax, compiled without flags) to a
 * JavaScript source for the `u` flag that matches the same strings with the same groups, or throws
 * JavaRegexError for what it cannot translate faithfully. Java's case-insensitivity (ASCII only) is spelled out
 * as character classes, so the JavaScript pattern needs no `i` flag.
 */
export function translateJavaRegex(java: string): JavaPattern {
  let out = '';
  let i = 0;
  let groupCount = 0;
  const names = new Set<string>();
  // Inline flags last to the end of the enclosing group.
  let flags = { i: false, s: false };
  const outer: (typeof flags)[] = [];

  /** A literal character outside a class: both ASCII cases under CASE_INSENSITIVE. */
  const atom = (cp: number): string => {
    if (flags.i && (isUpper(cp) || isLower(cp))) return `[${lit(cp)}${lit(cp ^ 0x20)}]`;
    return lit(cp);
  };

  /** The character class opening at `at`: [its JavaScript text, the index after it]. */
  const characterClass = (at: number): [string, number] => {
    let j = at + 1;
    const negated = java[j] === '^';
    if (negated) j++;
    const ranges: [number, number][] = [];
    let members = '';
    /** One class character (a literal or an escape standing for one), or null with the escape's class text. */
    const readChar = (): number | null => {
      const c = java[j]!;
      if (c === '[') throw unsupported('a character class union ([a[b]])', j);
      if (c === '&' && java[j + 1] === '&') throw unsupported('a character class intersection (&&)', j);
      if (c !== '\\') {
        const cp = java.codePointAt(j)!;
        j += cp > 0xffff ? 2 : 1;
        return cp;
      }
      const [e, next] = readEscape(java, j + 1, flags.i);
      if (e.kind === 'other' || (e.kind === 'class' && e.inside === null)) throw unsupported(`\\${java[j + 1]} inside a character class`, j);
      j = next;
      if (e.kind === 'class') {
        members += e.inside;
        return null;
      }
      for (const cp of e.cps.slice(0, -1)) ranges.push([cp, cp]);
      if (e.cps.length === 0) return null;
      return e.cps[e.cps.length - 1]!;
    };
    for (let first = true; ; first = false) {
      if (j >= java.length) throw new JavaRegexError(`unclosed character class at index ${at}`);
      if (java[j] === ']' && !first) {
        j++;
        break;
      }
      const lo = java[j] === ']' ? (j++, 0x5d) : readChar(); // a ']' first in the class is literal, as in Java
      if (lo === null) continue;
      if (java[j] === '-' && j + 1 < java.length && java[j + 1] !== ']') {
        j++;
        const hi = readChar();
        if (hi === null) throw new JavaRegexError(`illegal character range at index ${j}`);
        if (hi < lo) throw new JavaRegexError(`illegal character range at index ${j}`);
        ranges.push([lo, hi]);
      } else {
        ranges.push([lo, lo]);
      }
    }
    if (flags.i) {
      // CASE_INSENSITIVE without UNICODE_CASE: a class matches a character when it matches either ASCII case of it.
      for (const [lo, hi] of [...ranges]) {
        const upper: [number, number] = [Math.max(lo, 0x41), Math.min(hi, 0x5a)];
        const lower: [number, number] = [Math.max(lo, 0x61), Math.min(hi, 0x7a)];
        if (upper[0] <= upper[1]) ranges.push([upper[0] + 0x20, upper[1] + 0x20]);
        if (lower[0] <= lower[1]) ranges.push([lower[0] - 0x20, lower[1] - 0x20]);
      }
    }
    const text = ranges.map(([lo, hi]) => (lo === hi ? lit(lo) : `${lit(lo)}-${lit(hi)}`)).join('') + members;
    // An empty class matches nothing in both; `[^]` is written so JavaScript does not read it as "anything".
    return [text === '' ? (negated ? '[\\s\\S]' : '[]') : `[${negated ? '^' : ''}${text}]`, j];
  };

  const quantifierSuffix = (): void => {
    if (java[i] === '?') {
      out += '?';
      i++;
    } else if (java[i] === '+') {
      throw unsupported('a possessive quantifier', i);
    }
  };

  while (i < java.length) {
    const c = java[i]!;
    switch (c) {
      case '\\': {
        const [e, next] = readEscape(java, i + 1, flags.i);
        out += e.kind === 'chars' ? e.cps.map(atom).join('') : e.outside;
        i = next;
        break;
      }
      case '[': {
        const [text, next] = characterClass(i);
        out += text;
        i = next;
        break;
      }
      case '(': {
        const rest = java.slice(i + 1, i + 64);
        let inner = flags;
        if (!rest.startsWith('?')) {
          groupCount++;
          out += '(';
          i++;
        } else if (/^\?(?:[:=!]|<[=!])/.test(rest)) {
          const open = rest.startsWith('?<') ? rest.slice(0, 3) : rest.slice(0, 2);
          out += `(${open}`;
          i += 1 + open.length;
        } else if (rest.startsWith('?<')) {
          const m = /^\?<([a-zA-Z][a-zA-Z0-9]*)>/.exec(rest);
          if (!m) throw new JavaRegexError(`bad named group at index ${i}`);
          if (names.has(m[1]!)) throw new JavaRegexError(`named group <${m[1]}> is defined twice`);
          names.add(m[1]!);
          groupCount++;
          out += `(${m[0]}`;
          i += 1 + m[0].length;
        } else if (rest.startsWith('?>')) {
          throw unsupported('an atomic group', i);
        } else {
          const m = /^\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])/.exec(rest);
          if (!m) throw new JavaRegexError(`unknown group construct at index ${i}`);
          const next = { ...flags };
          for (const [letters, on] of [[m[1]!, true], [m[2] ?? '', false]] as const) {
            for (const f of letters) {
              if (f !== 'i' && f !== 's') throw unsupported(`the inline flag ${f}`, i);
              next[f] = on;
            }
          }
          i += 1 + m[0].length;
          if (m[3] === ')') {
            flags = next; // (?i): to the end of the enclosing group
            break;
          }
          out += '(?:';
          inner = next;
        }
        outer.push(flags);
        flags = inner;
        break;
      }
      case ')': {
        const saved = outer.pop();
        if (!saved) throw new JavaRegexError(`unmatched ')' at index ${i}`);
        flags = saved;
        out += ')';
        i++;
        break;
      }
      case '|':
        out += '|';
        i++;
        break;
      case '.':
        out += flags.s ? '[\\s\\S]' : JAVA_DOT;
        i++;
        break;
      case '$':
        out += JAVA_DOLLAR;
        i++;
        break;
      case '^':
        out += '^';
        i++;
        break;
      case '*': case '+': case '?':
        out += c;
        i++;
        quantifierSuffix();
        break;
      case '{': {
        const m = /^\{\d+(?:,\d*)?\}/.exec(java.slice(i, i + 32));
        if (!m) throw new JavaRegexError(`illegal repetition at index ${i}`);
        out += m[0];
        i += m[0].length;
        quantifierSuffix();
        break;
      }
      default: {
        const cp = java.codePointAt(i)!;
        out += atom(cp);
        i += cp > 0xffff ? 2 : 1;
      }
    }
  }
  if (outer.length > 0) throw new JavaRegexError('unclosed group');
  return { source: out, groupCount, names };
}
