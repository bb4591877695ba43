import type { BusinessKeys } from '../api/types';

/**
 * The runs search as typed: `name:value` terms are business keys, all of which a run must have; the
 * other words, joined by a space, are a run id prefix. A value with spaces or quotes is quoted
 * (`note:"two words"`, `\"` and `\\` inside), and a quoted word is id text even with a colon, for ids
 * like `schedule:nightly:…`. Names are not checked here: the server's refusal names the bad one.
 */
export interface RunSearch {
  idPrefix: string;
  keys: BusinessKeys;
}

const QUOTED = String.raw`"((?:[^"\\]|\\.)*)"(?=\s|$)`;
const TERM = new RegExp(String.raw`([^\s:"]*):${QUOTED}|${QUOTED}|(\S+)`, 'g');

export function parseRunSearch(text: string): RunSearch {
  const words: string[] = [];
  const keys = new Map<string, string>(); // not an object: any name typed, `__proto__` too, is kept as a name
  for (const [, quotedName, quotedValue, quotedWord, bare] of text.matchAll(TERM)) {
    if (quotedName !== undefined) keys.set(quotedName, unescape(quotedValue));
    else if (quotedWord !== undefined) words.push(unescape(quotedWord));
    else {
      const colon = bare.indexOf(':');
      if (colon < 0) words.push(bare);
      else keys.set(bare.slice(0, colon), bare.slice(colon + 1));
    }
  }
  return { idPrefix: words.join(' '), keys: Object.fromEntries(keys) };
}

/** The search term that finds the runs with this key; parseRunSearch reads it back as given. */
export function keyTerm(name: string, value: string): string {
  return value === '' || /[\s"\\]/.test(value) ? `${name}:"${value.replace(/["\\]/g, '\\$&')}"` : `${name}:${value}`;
}

/** Several keys as search terms, in their order. */
export function keyTerms(keys: BusinessKeys): string {
  return Object.entries(keys)
    .map(([name, value]) => keyTerm(name, value))
    .join(' ');
}

function unescape(quoted: string): string {
  return quoted.replace(/\\(.)/g, '$1');
}
