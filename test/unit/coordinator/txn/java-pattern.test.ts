import { describe, expect, it } from 'vitest';
import { javaPatternToRegExp } from '../../../../src/coordinator/txn/java-pattern.js';

describe('javaPatternToRegExp (ListTransactions v2 patterns, Java syntax)', () => {
  it('matches the whole id, as Matcher.matches()', () => {
    const re = javaPatternToRegExp('orders-.*');
    expect(re.test('orders-1')).toBe(true);
    expect(re.test('x-orders-1')).toBe(false);
    expect(javaPatternToRegExp('a|b').test('ab')).toBe(false);
  });

  it('takes \\Q…\\E quoting, as Pattern.quote writes it', () => {
    const re = javaPatternToRegExp('\\Qtx.1-(open)\\E');
    expect(re.test('tx.1-(open)')).toBe(true);
    expect(re.test('txx1-(open)')).toBe(false);
    expect(javaPatternToRegExp('\\Qa.b').test('a.b')).toBe(true);
    expect(javaPatternToRegExp('pre-\\Q*\\E-[0-9]+').test('pre-*-42')).toBe(true);
  });

  it('takes leading inline flags', () => {
    expect(javaPatternToRegExp('(?i)TX-.*').test('tx-1')).toBe(true);
  });

  it('refuses what JavaScript cannot express exactly', () => {
    for (const p of ['a*+', '(?>a)b', '\\Aa', '[a-z&&[^x]]', '(?x) a', '\\p{javaLowerCase}']) {
      expect(() => javaPatternToRegExp(p), p).toThrow(SyntaxError);
    }
    expect(() => javaPatternToRegExp('(')).toThrow(SyntaxError);
  });
});
