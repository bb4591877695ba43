import { InvalidArgumentError } from '../errors';
import { isStorableText } from './define-signal';

/** A run's business keys: what it is about (an order number, a customer), by name. */
export type BusinessKeys = Record<string, string>;

export const MAX_KEYS = 16;
const KEY_NAME = /^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/;
const MAX_VALUE = 200;

/**
 * Business keys as given, checked before anything is written: at most 16, names of a letter then up
 * to 63 letters, digits, `_`, `.` or `-`, values strings of at most 200 characters without NUL or a
 * lone surrogate. InvalidArgumentError names the key at fault. `nonEmpty`: a lookup needs one.
 */
export function checkKeys(keys: unknown, what: string, nonEmpty = false): BusinessKeys {
  if (typeof keys !== 'object' || keys === null || Array.isArray(keys))
    throw new InvalidArgumentError(
      `${what} must be an object of key names to string values; got ${Array.isArray(keys) ? 'an array' : String(keys)}.`,
    );
  const entries = Object.entries(keys);
  if (nonEmpty && !entries.length) throw new InvalidArgumentError(`${what} must name at least one key.`);
  if (entries.length > MAX_KEYS) throw new InvalidArgumentError(`${what} holds ${entries.length} keys; a run has at most ${MAX_KEYS}.`);
  for (const [name, value] of entries) {
    if (!KEY_NAME.test(name))
      throw new InvalidArgumentError(
        `${what}: the key name ${JSON.stringify(name.slice(0, 80))} must be a letter then up to 63 letters, digits, "_", "." or "-".`,
      );
    if (typeof value !== 'string')
      throw new InvalidArgumentError(`${what}: the value of key "${name}" must be a string; got ${typeof value}.`);
    if (value.length > MAX_VALUE)
      throw new InvalidArgumentError(`${what}: the value of key "${name}" has ${value.length} characters; at most ${MAX_VALUE}.`);
    if (!isStorableText(value))
      throw new InvalidArgumentError(`${what}: the value of key "${name}" cannot hold a NUL character or a lone surrogate.`);
  }
  return Object.fromEntries(entries) as BusinessKeys;
}
