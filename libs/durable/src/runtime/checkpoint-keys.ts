/**
 * How a run's checkpoint keys spell the names in them. A key joins a primitive's prefix, a name and
 * a repeat count with `:` and `#` (`signal:go`, `charge#2`, `consume:orders:A-1`), and the names are
 * the application's: raw, `go#2` called once met `go` called twice, a step `charge:a` met the step
 * `charge` keyed `a`, a signal `x:timed-out` met the timeout mark of `x`, and channel `a:b`'s keys fell
 * under channel `a`'s prefix. So since key format 2 a name's `%`, `:` and `#` are percent-escaped; a
 * name without them is spelled as it was. A run keeps the format it was inserted with (`runs.key_format`,
 * KEY_FORMAT): one inserted before, or by an instance of a version before (format 1), is re-executed
 * with the raw names its journal holds.
 */
const ESCAPED = /[%:#]/g;
const ESCAPES: Record<string, string> = { '%': '%25', ':': '%3A', '#': '%23' };

/** `name` as a part of a checkpoint key of the given format. */
export function keyPart(name: string, format: number): string {
  return format < 2 ? name : name.replace(ESCAPED, (c) => ESCAPES[c]);
}
