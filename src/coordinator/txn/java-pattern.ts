/**
 * A java.util.regex.Pattern as a JavaScript RegExp, for ListTransactions v2's transactional id pattern
 * (KIP-1152: Kafka's TransactionStateManager compiles it with Pattern.compile and keeps the ids it
 * `matches()` in full). The two dialects share their common syntax; what Java has and JavaScript lacks is
 * translated where the meaning carries over exactly, and refused otherwise (the caller answers
 * INVALID_REGULAR_EXPRESSION, as Kafka does for a pattern Java cannot compile):
 *
 *   \Q…\E          a quoted literal (Pattern.quote writes it): escaped character by character
 *   (?i) (?s) (?m) leading inline flags: the RegExp flags i, s, m
 *   (?x) (?d) (?u) (?U), possessive quantifiers (*+ ++ ?+ }+), atomic groups (?>…), \A \Z \z \G,
 *   \p{javaXxx}, \h \R \X, [a-z&&[^x]] class intersection: refused (no exact JavaScript equivalent)
 */
const JS_SPECIAL = /[\\^$.*+?()[\]{}|]/g;

function quoteLiteral(text: string): string {
  return text.replace(JS_SPECIAL, '\\$&');
}

/** The RegExp matching exactly the strings `Pattern.compile(pattern).matcher(s).matches()` accepts. Throws SyntaxError otherwise. */
export function javaPatternToRegExp(pattern: string): RegExp {
  let body = '';
  let flags = 'u';
  let rest = pattern;
  const leading = /^\(\?([ism]+)\)/.exec(rest);
  if (leading) {
    for (const f of new Set(leading[1])) flags += f;
    rest = rest.slice(leading[0].length);
  }
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (c === '\\') {
      const next = rest[i + 1];
      if (next === undefined) throw new SyntaxError('unexpected end of pattern after \\');
      if (next === 'Q') {
        const end = rest.indexOf('\\E', i + 2);
        const literal = end < 0 ? rest.slice(i + 2) : rest.slice(i + 2, end);
        body += quoteLiteral(literal);
        i = end < 0 ? rest.length : end + 1;
        continue;
      }
      if ('AZzGhRX'.includes(next) || (next === 'p' && rest.startsWith('{java', i + 2))) {
        throw new SyntaxError(`\\${next} has no JavaScript equivalent`);
      }
      body += c + next;
      i++;
      continue;
    }
    if ((c === '*' || c === '+' || c === '?' || c === '}') && rest[i + 1] === '+' && rest[i - 1] !== '\\') {
      throw new SyntaxError('possessive quantifiers have no JavaScript equivalent');
    }
    if (c === '(' && rest[i + 1] === '?' && rest[i + 2] !== undefined && '>ixduU'.includes(rest[i + 2]!)) {
      throw new SyntaxError(`(?${rest[i + 2]} has no JavaScript equivalent`);
    }
    if (c === '&' && rest[i + 1] === '&') throw new SyntaxError('character class intersection has no JavaScript equivalent');
    body += c;
  }
  return new RegExp(`^(?:${body})$`, flags);
}
