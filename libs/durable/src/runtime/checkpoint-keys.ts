import { InvalidArgumentError } from '../errors';
import { isStorableText } from '../schema/define-signal';
import { errorInfo } from './errors';
import { safeString } from '../schema/safe-string';

/**
 * How a run's checkpoint keys spell the names in them. A key joins a primitive's prefix, a name and
 * a repeat count with `:` and `#` (`signal:go`, `charge#2`, `select:pick#2:deadline`), and the names are
 * the application's: raw, `go#2` called once met `go` called twice, a step `charge:a` met the step
 * `charge` keyed `a`, a signal `x:timed-out` met the timeout mark of `x`, and channel `a:b`'s keys fell
 * under channel `a`'s prefix. So since key format 2 the names the engine counts (Execution.keyFor) and
 * a keyed step's name have their `%`, `:` and `#` percent-escaped; a name without them is spelled as it
 * was. What ends a key stays raw (a step's `key`, a message key, a child step, a patch id, a select's
 * arm): nothing follows it. A run keeps the format it was inserted with (`runs.key_format`,
 * KEY_FORMAT): one inserted before, or by an instance of a version before (format 1), is re-executed
 * with the raw names its journal holds.
 */
const ESCAPED = /[%:#]/g;
const ESCAPES: Record<string, string> = { '%': '%25', ':': '%3A', '#': '%23' };

/** `name` as a part of a checkpoint key of the given format. */
export function keyPart(name: string, format: number): string {
  return format < 2 ? name : name.replace(ESCAPED, (c) => ESCAPES[c]);
}

/** The prefixes of the primitives' keys: a keyed step (`name:key`) named as one would meet their keys. */
const PRIMITIVE_PREFIXES = new Set([
  'signal',
  'signal-deadline',
  'sleep',
  'select',
  'receive',
  'consume',
  'child',
  'child-result',
  'patch',
  'run-deadline',
]);

/** ctx.setKeys' key (`set-keys`, `set-keys#2`…), which a step so named would take. */
export const SET_KEYS = 'set-keys';

/** Refuses a step name whose keys would be a primitive's: `set-keys`, or a primitive's prefix with a `key` option. */
export function checkStepName(name: string, keyed: boolean): string {
  if (name === SET_KEYS)
    throw new InvalidArgumentError(`A step cannot be named "${SET_KEYS}": its checkpoint keys are those of ctx.setKeys().`);
  if (keyed && PRIMITIVE_PREFIXES.has(name)) {
    throw new InvalidArgumentError(
      `A step with a key option cannot be named "${name}": its checkpoint keys (${name}:<key>) are those of a primitive's.`,
    );
  }
  return name;
}

/**
 * The longest key a step's `key` option may give, in UTF-8 bytes: with the escaped name and the
 * run's id it stays inside an index entry of the journal's primary key (about 2,700 bytes).
 */
const MAX_STEP_KEY_BYTES = 1_000;

/**
 * The checkpoint key of a keyed step called with `args`, checked before the step runs: a key that is
 * not text (a field read from the wrong object gives `undefined`, which would give every item the
 * first one's stored result), empty, too long, or not storable (a NUL) is refused, as is a key
 * function that throws (InvalidArgumentError: a mistake in the code, which a retry would repeat). A
 * key the run journaled before keys were checked (`stored`: an empty one, say) is used as it was, so a
 * run in flight replays it. `prefix` is the escaped name and its `:`.
 */
export function stepKey(
  name: string,
  prefix: string,
  key: (...args: any[]) => unknown,
  args: readonly unknown[],
  stored: (key: string) => boolean,
): string {
  let value: unknown;
  try {
    value = key(...args);
  } catch (error) {
    throw new InvalidArgumentError(`The key option of step "${name}" threw: ${errorInfo(error).message}`);
  }
  const text =
    typeof value === 'string'
      ? value
      : (typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint'
        ? String(value)
        : undefined;
  if (text !== undefined && text.length > 0 && Buffer.byteLength(text) <= MAX_STEP_KEY_BYTES && isStorableText(text)) return prefix + text;
  const legacy = legacyText(value);
  if (legacy !== undefined && stored(prefix + legacy)) return prefix + legacy;
  const got = text !== undefined ? `${Buffer.byteLength(text)} bytes` : typeof value === 'number' ? String(value) : safeString(value);
  throw new InvalidArgumentError(
    `The key option of step "${name}" must give a non-empty string (or a finite number or a bigint) of at most ${MAX_STEP_KEY_BYTES} bytes (UTF-8), without NUL or lone surrogates; got ${got}.`,
  );
}

/** How a key was written before keys were checked: formatted into the key as it was. */
function legacyText(value: unknown): string | undefined {
  try {
    return `${value as string}`;
  } catch {
    return undefined; // a null prototype: it never made a key
  }
}
