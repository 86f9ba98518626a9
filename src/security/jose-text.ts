/**
 * The text layer of JOSE as Ledgerline reads it for OAUTHBEARER (jwks.ts, jwt-validator.ts): a strict JSON parser
 * (one linear pass, nesting bounded, a member name given twice refused, as jose4j refuses it), base64url sections, and
 * the few Java string operations whose exact behaviour Kafka's messages and checks depend on.
 */
import { MAX_JSON_DEPTH } from './jwks.js';

// ---- strict JSON ----

export type Json = null | boolean | number | string | Json[] | JsonObject;
/** A JSON object, with a null prototype: member names are data, `__proto__` included. */
export interface JsonObject {
  [name: string]: Json;
}

class JsonSyntaxError extends Error {}

/**
 * RFC 8259 JSON in one linear pass, nesting bounded, a member name given twice refused (as jose4j's JsonUtil
 * refuses it: "An entry for 'x' already exists. Names must be unique.").
 */
export function parseJson(text: string): Json {
  let i = 0;
  const fail = (what: string): never => {
    throw new JsonSyntaxError(`${what} (at character ${i})`);
  };
  const skipWhitespace = (): void => {
    for (; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    }
  };
  const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
  const readString = (): string => {
    i++; // the opening quote
    let out = '';
    let start = i;
    for (;;) {
      if (i >= text.length) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail('control character in a string');
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += text.slice(start, i);
      const e = text[i + 1];
      if (e === 'u') {
        const hex = text.slice(i + 2, i + 6);
        if (!/^[0-9A-Fa-f]{4}$/.test(hex)) fail('bad \\u escape');
        out += String.fromCharCode(parseInt(hex, 16));
        i += 6;
      } else {
        const simple = ({ '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as Record<string, string>)[e ?? ''];
        if (simple === undefined) fail('bad escape');
        out += simple;
        i += 2;
      }
      start = i;
    }
  };
  const readValue = (depth: number): Json => {
    skipWhitespace();
    const c = text[i];
    if (c === '{') {
      if (depth >= MAX_JSON_DEPTH) fail('nested too deep');
      i++;
      const object = Object.create(null) as JsonObject;
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return object;
      }
      for (;;) {
        skipWhitespace();
        if (text[i] !== '"') fail('expected a member name');
        const name = readString();
        if (Object.hasOwn(object, name)) fail(`An entry for '${clip(name)}' already exists. Names must be unique.`);
        skipWhitespace();
        if (text[i] !== ':') fail("expected ':'");
        i++;
        object[name] = readValue(depth + 1);
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return object;
        }
        fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      if (depth >= MAX_JSON_DEPTH) fail('nested too deep');
      i++;
      const array: Json[] = [];
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return array;
      }
      for (;;) {
        array.push(readValue(depth + 1));
        skipWhitespace();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return array;
        }
        fail("expected ',' or ']'");
      }
    }
    if (c === '"') return readString();
    for (const [literal, value] of [['true', true], ['false', false], ['null', null]] as const) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return value;
      }
    }
    NUMBER.lastIndex = i;
    const number = NUMBER.exec(text);
    if (number === null) return fail('expected a value');
    i += number[0].length;
    return Number(number[0]);
  };
  const value = readValue(0);
  skipWhitespace();
  if (i !== text.length) fail('text after the value');
  return value;
}

export function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A member of a parsed object; JSON null reads as absent, as a Java map lookup does. */
export function member(object: JsonObject, name: string): Json | undefined {
  return Object.hasOwn(object, name) && object[name] !== null ? object[name] : undefined;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON object a base64 section holds, or the reason it holds none. */
export function decodeJsonObject(section: string, alphabet: RegExp): JsonObject | string {
  if (!alphabet.test(section) || section.replace(/=+$/, '').length % 4 === 1) return 'malformed Base64 URL encoded value';
  let value: Json;
  try {
    value = parseJson(UTF8.decode(Buffer.from(section, 'base64')));
  } catch (err) {
    return err instanceof JsonSyntaxError ? `malformed JSON: ${err.message}` : 'malformed JSON: not UTF-8';
  }
  return isObject(value) ? value : 'malformed JSON: not an object';
}

export const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Either alphabet, padding optional: what the unsecured validator reads. */
export const BASE64_ANY = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** At most 200 characters of text from a token, for a message. */
export function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** Java's String.trim: code units up to U+0020 off both ends. */
export function javaTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) <= 0x20) start++;
  while (end > start && text.charCodeAt(end - 1) <= 0x20) end--;
  return text.slice(start, end);
}

/** Java's String.split at a literal: trailing empty strings dropped. */
export function javaSplit(text: string, separator: string): string[] {
  if (!text.includes(separator)) return [text];
  const parts = text.split(separator);
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Java's List.toString. */
export function javaList(values: readonly string[]): string {
  return `[${values.join(', ')}]`;
}
