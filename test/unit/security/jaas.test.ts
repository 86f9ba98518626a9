import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { JaasConfigError, parseJaasConfig, parseSaslJaasConfig } from '../../../src/security/jaas.js';

const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule';

function options(text: string): Record<string, string> {
  return Object.fromEntries(parseSaslJaasConfig(text).options);
}

function refusal(text: string): string {
  try {
    parseJaasConfig(text);
  } catch (err) {
    expect(err).toBeInstanceOf(JaasConfigError);
    return (err as JaasConfigError).message;
  }
  throw new Error(`parsed: ${text}`);
}

describe('parseJaasConfig', () => {
  it('reads a broker PLAIN config as Kafka documents it', () => {
    const entry = parseSaslJaasConfig(`${PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`);
    expect(entry.loginModule).toBe(PLAIN);
    expect(entry.flag).toBe('required');
    expect(Object.fromEntries(entry.options)).toEqual({ username: 'admin', password: 'admin-secret', user_admin: 'admin-secret', user_alice: 'alice-secret' });
  });

  it('reads every control flag, in any case', () => {
    for (const [text, flag] of [
      ['required', 'required'],
      ['REQUISITE', 'requisite'],
      ['Sufficient', 'sufficient'],
      ['optional', 'optional'],
      ['"required"', 'required'],
    ]) {
      expect(parseSaslJaasConfig(`test.Module ${text};`).flag).toBe(flag);
    }
  });

  it('reads several login modules in order', () => {
    const entries = parseJaasConfig('test.Module0 required index="Index0"; test.Module1 optional index=Index1;\n test.Module2 sufficient;');
    expect(entries.map((e) => [e.loginModule, e.flag, Object.fromEntries(e.options)])).toEqual([
      ['test.Module0', 'required', { index: 'Index0' }],
      ['test.Module1', 'optional', { index: 'Index1' }],
      ['test.Module2', 'sufficient', {}],
    ]);
  });

  it('takes quoted values with spaces, separators and either quote, and quoted option names', () => {
    expect(options(`m required a="prop value" b="value1 = 1, value2 = 2; x" c='single "quoted"' "prop name"=v;`)).toEqual({
      a: 'prop value',
      b: 'value1 = 1, value2 = 2; x',
      c: 'single "quoted"',
      'prop name': 'v',
    });
  });

  it('reads unquoted words with digits, dots, dashes, underscores, dollars and non-ASCII letters', () => {
    expect(options('m required user_alice1=abc-1.2_$x user_jürgen=ok user_日本="pw" flag=true;')).toEqual({
      user_alice1: 'abc-1.2_$x',
      user_jürgen: 'ok',
      user_日本: 'pw',
      flag: 'true',
    });
  });

  it('decodes the escapes of Java string literals, as StreamTokenizer does', () => {
    expect(options(String.raw`m required q="a\"b" s="c\\d" n="1\n2" t="\t" b="\b\f\r\a\v" o="\101\0\477\8";`)).toEqual({
      q: 'a"b',
      s: 'c\\d',
      n: '1\n2',
      t: '\t',
      b: '\b\f\r\x07\x0b',
      o: 'A\0\x277' + '8',
    });
  });

  it('ends a string at the end of its line, without an error, as StreamTokenizer does', () => {
    expect(options('m required a="x\nb="y";')).toEqual({ a: 'x', b: 'y' });
  });

  it('skips // and /* */ comments, and a lone / up to the end of the line', () => {
    expect(options('// leading\nm /* the flag: */ required a="1" // a\n b="2" /* multi\nline */ c=x/ comment;\n;')).toEqual({ a: '1', b: '2', c: 'x' });
  });

  it('hides the line after a lone / that ends a line, as Java does', () => {
    expect(options('m required a=x/\n hidden="1"\n b="2";')).toEqual({ a: 'x', b: '2' });
  });

  it('keeps the last value of a key given twice', () => {
    expect(options('m required k="1" k="2";')).toEqual({ k: '2' });
  });

  it("refuses what Kafka's JaasContextTest refuses, with Kafka's messages", () => {
    expect(refusal('  required option1=value1;')).toBe("Invalid login module control flag 'option1' in JAAS config");
    expect(refusal('test.loginModule option1=value1;')).toBe("Invalid login module control flag 'option1' in JAAS config");
    expect(refusal('loginModule required option1;')).toBe("Value not specified for key 'option1' in JAAS config");
    expect(refusal('test.testMissingSemicolon required option1=value1')).toBe('JAAS config entry not terminated by semi-colon');
    expect(refusal('test.testInvalidControlFlag { option1=3;')).toBe('Login module control flag is not available in the JAAS config');
  });

  it('refuses an empty config, a module without a flag and a key without a value', () => {
    expect(refusal('')).toBe('Login module not specified in JAAS config');
    expect(refusal('  // only a comment\n /* and another */ ')).toBe('Login module not specified in JAAS config');
    expect(refusal('test.Module')).toBe('Login module control flag not specified in JAAS config');
    expect(refusal('m required k=;')).toBe("Value not specified for key 'k' in JAAS config");
    expect(refusal('m required k=')).toBe("Value not specified for key 'k' in JAAS config");
    expect(refusal('m required k "v";')).toBe("Value not specified for key 'k' in JAAS config");
    expect(refusal('m required k="v"')).toBe('JAAS config entry not terminated by semi-colon');
    expect(refusal('m required k="v" /* unterminated ;')).toBe('JAAS config entry not terminated by semi-colon');
  });

  it('refuses unquoted numbers as values, saying to quote them', () => {
    const hint = " (quote a value that starts with a digit, '.' or '-')";
    expect(refusal('test.testNumericOptionWithoutQuotes required option1=3;')).toBe(`Value not specified for key 'option1' in JAAS config${hint}`);
    expect(refusal('m required k=-1;')).toBe(`Value not specified for key 'k' in JAAS config${hint}`);
    expect(refusal('m required k=.5;')).toBe(`Value not specified for key 'k' in JAAS config${hint}`);
    expect(refusal('m required k=-abc;')).toBe(`Value not specified for key 'k' in JAAS config${hint}`);
    expect(options('test.testNumericOptionWithQuotes required option1="3";')).toEqual({ option1: '3' });
  });

  it('refuses option names and module names that are not words or strings', () => {
    expect(refusal('m required 123="x";')).toBe('Option name not specified in JAAS config: an option name is a word or a quoted string');
    expect(refusal('m required ="x";')).toBe('Option name not specified in JAAS config: an option name is a word or a quoted string');
    expect(refusal('"" required;')).toBe('Login module name not specified in JAAS config');
    expect(refusal('42 required;')).toBe('Login module name not specified in JAAS config');
  });

  it('names keys, never values, in its messages', () => {
    const message = refusal('m required password="s3cret-value" user_bob=;');
    expect(message).toBe("Value not specified for key 'user_bob' in JAAS config");
    expect(message).not.toContain('s3cret');
  });

  it('raises a LedgerlineError with the INVALID_CONFIG Kafka code', () => {
    const err = (() => {
      try {
        parseJaasConfig('m');
      } catch (e) {
        return e as JaasConfigError;
      }
    })();
    expect(err?.code).toBe('LL_ERR_CONFIG');
    expect(err?.kafkaErrorCode).toBe(ErrorCode.INVALID_CONFIG);
  });

  it('reads any value back from a quoted string with its quotes, backslashes and line ends escaped', () => {
    const escape = (v: string): string => v.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n').replace(/\r/g, '\\r');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 40 }), (value, other) => {
        const entry = parseSaslJaasConfig(`${PLAIN} required user_a="${escape(value)}" user_b="${escape(other)}";`);
        expect(entry.options.get('user_a')).toBe(value);
        expect(entry.options.get('user_b')).toBe(other);
      }),
      { numRuns: 500 },
    );
  });

  it('throws nothing but JaasConfigError, whatever the input', () => {
    const alphabet = fc.constantFrom('m', ' ', '\n', '=', ';', '"', "'", '\\', '/', '*', '-', '.', '1', 'required', 'k', 'é', '{');
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.array(alphabet, { maxLength: 30 }).map((a) => a.join(''))), (text) => {
        try {
          parseJaasConfig(text);
        } catch (err) {
          expect(err).toBeInstanceOf(JaasConfigError);
        }
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('parseSaslJaasConfig', () => {
  it("requires exactly one login module, as Kafka's JaasContext does for sasl.jaas.config", () => {
    expect(() => parseSaslJaasConfig('a required; b required;')).toThrow(new JaasConfigError('JAAS config property contains 2 login modules, should be 1 module'));
    expect(parseSaslJaasConfig('a required;').loginModule).toBe('a');
  });
});
