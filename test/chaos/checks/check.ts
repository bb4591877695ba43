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
