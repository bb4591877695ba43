import { InvalidPayloadError, NonRetryableError } from '../errors';
import { types } from 'node:util';

/**
 * Values travel as JSON text with tagged objects for what JSON lacks (Date, BigInt, Map, Set, Buffer,
 * undefined, non-finite numbers). Stored as text, not jsonb, so `\u0000` and lone surrogates round-trip
 * instead of being refused by Postgres. Functions, symbols and cycles are refused with the path to them.
 */
const TAG = '$t';
const MAX_DEPTH = 500;
/** A stored value is a row's column read on every replay: large data belongs elsewhere, referenced by id. */
export const MAX_STORED_BYTES = 4 * 1024 * 1024;

type Tagged = { [TAG]: string; v?: unknown };

export class SerializationError extends NonRetryableError {}

export function serialize(value: unknown, what: string): string {
  return storable(JSON.stringify(encode(value, what, '$', new Set(), 0)), what);
}

function storable(text: string, what: string): string {
  if (text.length > MAX_STORED_BYTES / 4 && Buffer.byteLength(text) > MAX_STORED_BYTES) {
    throw new SerializationError(
      `${what} cannot be stored: it is ${(Buffer.byteLength(text) / 1048576).toFixed(1)} MiB encoded, more than the 4 MiB a value may take. Store large data elsewhere and pass a reference.`,
    );
  }
  return text;
}

/** serialize() for values that come from a caller (inputs, payloads): what cannot be stored is an InvalidPayloadError. */
export function serializePayload(value: unknown, what: string): string {
  return asPayload(() => serialize(value, what), what);
}

/**
 * serializePayload({ ...deserialize(stored), ...fields }) for a stored object, in the same text, without
 * decoding and encoding what it already holds: a schedule pass stamps thousands of stored inputs with
 * their slot at a minute boundary, and the two walks were most of its time per run.
 */
export function serializePayloadWith(stored: string, fields: Record<string, unknown>, what: string): string {
  const raw: unknown = JSON.parse(stored);
  // A tagged value (an object wrapped because it had our tag key, a Map…) spreads as its decoded form.
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw) || TAG in raw)
    return serializePayload({ ...deserialize<object>(stored), ...fields }, what);
  return asPayload(() => {
    for (const key of Object.keys(fields)) (raw as Record<string, unknown>)[key] = encode(fields[key], what, `$.${key}`, new Set(), 1);
    return storable(JSON.stringify(raw), what);
  }, what);
}

function asPayload(write: () => string, what: string): string {
  try {
    return write();
  } catch (error) {
    if (error instanceof SerializationError) throw new InvalidPayloadError(what, [{ path: '', message: error.message }]);
    throw error;
  }
}

export function deserialize<T = unknown>(text: string | null | undefined): T {
  if (text === null || text === undefined) return undefined as T;
  return decode(JSON.parse(text)) as T;
}

function encode(value: unknown, what: string, path: string, seen: Set<object>, depth: number): unknown {
  if (depth > MAX_DEPTH)
    throw new SerializationError(`${what} cannot be stored: it is nested more than ${MAX_DEPTH} levels deep (at ${path}).`);
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : { [TAG]: 'Number', v: String(value) };
    case 'undefined':
      return { [TAG]: 'undefined' };
    case 'bigint':
      return { [TAG]: 'BigInt', v: value.toString() };
    case 'function':
    case 'symbol':
      throw new SerializationError(
        `${what} cannot be stored: ${path} is a ${typeof value}. Return plain data (JSON, Date, BigInt, Map, Set, Buffer).`,
      );
  }
  if (value === null) return null;
  const object = value as object;
  if (seen.has(object)) throw new SerializationError(`${what} cannot be stored: ${path} refers back to itself (a cycle).`);
  seen.add(object);
  try {
    const next = (v: unknown, p: string) => encode(v, what, p, seen, depth + 1);
    if (Array.isArray(object)) return object.map((item, i) => next(item, `${path}[${i}]`));
    // A plain object, most of what is stored, is its fields: what else an object may be is asked of the others only.
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      // By their internal type, not instanceof: a Date or bytes of another realm (a vm context) are those too.
      if (types.isDate(object)) {
        const time = Date.prototype.getTime.call(object);
        return { [TAG]: 'Date', v: Number.isNaN(time) ? null : new Date(time).toISOString() };
      }
      // A Uint8Array (what fetch and most binary APIs hand over) keeps its bytes, and comes back as a Buffer (a Uint8Array).
      if (types.isUint8Array(object))
        return { [TAG]: 'Buffer', v: Buffer.from(object.buffer, object.byteOffset, object.byteLength).toString('base64') };
      if (types.isMap(object))
        return { [TAG]: 'Map', v: [...object].map(([k, v], i) => [next(k, `${path}.key${i}`), next(v, `${path}.get(${i})`)]) };
      if (types.isSet(object)) return { [TAG]: 'Set', v: [...object].map((item, i) => next(item, `${path}[${i}]`)) };
      const refused = unstorable(object);
      if (refused)
        throw new SerializationError(
          `${what} cannot be stored: ${path} is ${refused}. Return plain data (JSON, Date, BigInt, Map, Set, Buffer).`,
        );
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(object)) {
      const encoded = next((object as Record<string, unknown>)[key], `${path}.${key}`);
      // A key named `__proto__` (JSON.parse makes it an own field) stays a field: assigned, it would set the prototype and vanish.
      if (key === '__proto__') Object.defineProperty(out, key, { value: encoded, enumerable: true, writable: true, configurable: true });
      else out[key] = encoded;
    }
    // An object of the user's that happens to have our tag key is wrapped, so decode cannot mistake it.
    return TAG in out ? { [TAG]: 'Object', v: out } : out;
  } finally {
    seen.delete(object);
  }
}

/**
 * What an object of a class (not a plain object) is when its own enumerable fields would not stand for it (so it
 * would come back as `{}` or as its internals, and the replay would see other data than the first execution):
 * undefined when they do.
 */
function unstorable(object: object): string | undefined {
  if (ArrayBuffer.isView(object) || types.isAnyArrayBuffer(object))
    return `a ${object.constructor?.name ?? 'binary value'} (binary data other than bytes: store a Buffer of it)`;
  if (types.isNativeError(object) || object instanceof Error) return `an ${(object as Error).name} (store its message, or throw it)`;
  if (typeof (object as { then?: unknown }).then === 'function') return 'a Promise (an await missing?)';
  if (types.isRegExp(object)) return 'a RegExp (store its source)';
  // URL, Decimal, Luxon's DateTime, a Mongoose document: an object that says what stands for it in JSON.
  if (typeof (object as { toJSON?: unknown }).toJSON === 'function')
    return `a ${object.constructor?.name ?? 'value'} with toJSON() (store what that returns, or the fields you need)`;
  return undefined;
}

function decode(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(decode);
  const tagged = value as Tagged;
  if (typeof tagged[TAG] === 'string') {
    switch (tagged[TAG]) {
      case 'undefined':
        return undefined;
      case 'Number':
        return Number(tagged.v);
      case 'BigInt':
        return BigInt(tagged.v as string);
      case 'Date':
        return new Date(tagged.v === null ? NaN : (tagged.v as string));
      case 'Buffer':
        return Buffer.from(tagged.v as string, 'base64');
      case 'Map':
        return new Map((tagged.v as [unknown, unknown][]).map(([k, v]) => [decode(k), decode(v)]));
      case 'Set':
        return new Set((tagged.v as unknown[]).map(decode));
      case 'Object':
        return decodeObject(tagged.v as Record<string, unknown>);
    }
  }
  return decodeObject(value as Record<string, unknown>);
}

function decodeObject(object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // defineProperty, so that a key named `__proto__` stays data and never becomes the prototype.
  for (const key of Object.keys(object))
    Object.defineProperty(out, key, { value: decode(object[key]), enumerable: true, writable: true, configurable: true });
  return out;
}
