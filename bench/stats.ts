/** A figure as published: the median of its repetitions, with their spread. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Every repetition's value, in the order measured. */
  reps: number[];
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Linear interpolation between closest ranks; NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
}

export function spread(reps: readonly number[]): Spread {
  return { median: median(reps), min: Math.min(...reps), max: Math.max(...reps), reps: reps.map((v) => round(v, 3)) };
}

/** p50, p95, p99 and max of one repetition's samples. */
export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentiles(samples: readonly number[]): Percentiles {
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), p99: percentile(samples, 99), max: Math.max(...samples) };
}

/** Each percentile's median and spread across repetitions. */
export function percentileSpreads(reps: readonly Percentiles[]): Record<keyof Percentiles, Spread> {
  const of = (key: keyof Percentiles) => spread(reps.map((r) => r[key]));
  return { p50: of('p50'), p95: of('p95'), p99: of('p99'), max: of('max') };
}

export function round(value: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
