import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Machine } from '../environment';
import type { Plan } from '../plan';
import type { FanOutFigures } from '../scenarios/fan-out';
import type { LatencyFigures } from '../scenarios/latency';
import type { ScaleFigures } from '../scenarios/scale';
import type { ScheduleFigures } from '../scenarios/schedules';
import type { QueueFigures } from '../scenarios/queues';
import type { ProcessFigures } from '../scenarios/processes';
import type { RetentionFigures } from '../scenarios/retention';
import type { RoundTripFigures } from '../scenarios/signals';
import type { SleepFigures } from '../scenarios/sleeps';
import type { StatementFigures } from '../scenarios/statements';
import type { DbosPools, RateTable, System } from '../scenarios/throughput';
import { round, Spread } from '../stats';
import type { TargetCheck } from './targets';

/** Everything one run measured, as written to bench/results/<date>.json. */
export interface BenchResults {
  date: string;
  quick: boolean;
  durationMinutes: number;
  machine: Machine;
  versions: Record<string, string>;
  postgres: { source: string; version: string; settings: Record<string, string>; pgStatStatements: boolean };
  method: Record<string, string | number | number[]>;
  plan: Plan;
  /** Medians, workflows per second: throughput.c8.ours. */
  throughput: Record<string, Partial<Record<System, number>>>;
  throughputSpread: RateTable<System>;
  stepsPerSecond: Record<string, Partial<Record<System, number>>>;
  /** DBOS' throughput at its default pool and at ours; `throughput.dbos` is the better of the two. Absent before 2026-12. */
  dbosPools?: DbosPools;
  postgresCeiling: { singleRowInsertsPerSecond: RateTable<'ceiling'> };
  latencyMs: LatencyFigures;
  /** The same after the process has run workflows for `plan.latencyWarmMs`; absent before 2026-12-03's second run. */
  latencyWarmMs?: LatencyFigures;
  signalRoundTripMs: RoundTripFigures;
  sleepLatenessMs: SleepFigures;
  perWorkflow: StatementFigures;
  scale: ScaleFigures;
  /** Absent in results written before the schedules section existed. */
  schedules?: ScheduleFigures;
  /** Absent in results written before the queues section existed. */
  queues?: QueueFigures;
  /** 1, 2 and 4 worker processes on one database; absent before 2026-12. */
  processes?: ProcessFigures;
  /** A day's journal dropped while workflows run; absent before 2026-12-01's partitioned journal. */
  retention?: RetentionFigures;
  fanOut: FanOutFigures;
  targets: TargetCheck[];
  /** Figures that could not be measured, by scenario and system, with the reason. */
  errors: Record<string, string>;
}

/** The median table (workflows/s) and steps/s from the spreads. */
export function medians(table: RateTable<System>, factor = 1): Record<string, Partial<Record<System, number>>> {
  const out: Record<string, Partial<Record<System, number>>> = {};
  for (const [level, row] of Object.entries(table)) {
    out[level] = {};
    for (const [system, value] of Object.entries(row) as Array<[System, Spread]>) out[level][system] = round(value.median * factor, 1);
  }
  return out;
}

export function writeJson(path: string, results: BenchResults): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(
    path,
    `${JSON.stringify(results, (_key, value) => (typeof value === 'number' && !Number.isInteger(value) ? round(value, 3) : value), 2)}\n`,
  );
}
