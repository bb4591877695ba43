import { readFileSync, writeFileSync } from 'node:fs';
import type { Evidence } from './checks/data';

/**
 * The evidence of a session as a file (`evidence.json` in its directory), so the checker can be run
 * again over a kept session (`npm run chaos -- --recheck <dir>`) without running the chaos again:
 * Maps, Sets and Dates are tagged on the way out and rebuilt on the way in.
 */
export function saveEvidence(path: string, evidence: Evidence): void {
  writeFileSync(
    path,
    JSON.stringify(evidence, function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      if (raw instanceof Date) return { $date: raw.getTime() };
      if (raw instanceof Map) return { $map: [...raw.entries()] };
      if (raw instanceof Set) return { $set: [...raw.values()] };
      return value;
    }),
  );
}

export function readEvidence(path: string): Evidence {
  return JSON.parse(readFileSync(path, 'utf8'), (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      const tagged = value as { $date?: number; $map?: Array<[unknown, unknown]>; $set?: unknown[] };
      if (tagged.$date !== undefined) return new Date(tagged.$date);
      if (tagged.$map) return new Map(tagged.$map);
      if (tagged.$set) return new Set(tagged.$set);
    }
    return value;
  }) as Evidence;
}
