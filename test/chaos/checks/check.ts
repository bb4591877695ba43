import type { Evidence, Violation } from './data';

/** One promise checked: what broke it, and the figures it measured along the way. */
export interface CheckResult {
  violations: Violation[];
  metrics: Record<string, number | string>;
}

export type Check = (e: Evidence) => CheckResult;

/** The runs the driver started (children are `${id}/child`). */
export function startedRuns(e: Evidence): string[] {
  return e.starts.filter((s) => s.ok).map((s) => s.runId);
}

/** A run's end: completed, failed or cancelled (live, or deleted by retention). */
export const FINISHED = new Set(['completed', 'failed', 'cancelled']);

/** The runs whose cancel an answer confirmed, and every run a cancel was tried on (a lost answer may have cancelled it too). */
export function cancelsOf(e: Evidence): { accepted: Set<string>; tried: Set<string> } {
  const ops = e.operations.filter((o) => o.op === 'cancel');
  return { accepted: new Set(ops.filter((o) => o.outcome === 'accepted').map((o) => o.runId)), tried: new Set(ops.map((o) => o.runId)) };
}

/** Equal as JSON whatever the key order (jsonb reorders keys). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Clock slack for comparing instants written by different statements (same machine, same clock). */
export const SLACK_MS = 250;

/**
 * For two instants on this machine's one clock where one must come first (a commit, then the answer
 * that saw it): only rounding (commit times in µs, the harness's in whole ms).
 */
export const ORDER_MS = 2;
