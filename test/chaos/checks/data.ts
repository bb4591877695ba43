import { deserialize } from 'nestjs-durable/schema/serializer';
import type { Effect } from '../chaos.workflows';
import { businessTable, ledgerTable } from '../chaos.workflows';
import type { HarnessDb } from '../db';
import type { DeliveryRecord, OperatorRecord, RollbackRecord, StartRecord } from '../driver';
import type { FaultRecord } from '../faults';
import type { ProcessRecord } from '../fleet';
import type { ListenSample, StuckRun } from '../monitor';
import type { PlannedRun } from '../plan';
import type { Profile } from '../profiles';

/**
 * Everything the checks read: the library's tables (with the rows retention deleted, from their
 * archive: see archive.ts), the ledger, the business rows, and what the harness did and saw.
 */
export interface Evidence {
  profile: Profile;
  /** How many phases ran: a profile's minimums are per cycle of phases. */
  phases: number;
  /** Every run the schedule planned, with every delivery planned for it: the checks hold each to its fate. */
  planned: PlannedRun[];
  /** Every worker and sender process that got ready (a killed worker's replacement is a new one). */
  processes: ProcessRecord[];
  /** Live runs, and deleted ones (`deleted_at` set). */
  runs: Map<string, RunRow>;
  /** Steps by run, then by key; `committedAt` is the commit time of the row's transaction (ms, µs precision). */
  steps: Map<string, Map<string, StepRow>>;
  signals: Map<string, SignalRow>;
  messages: Map<string, MessageRow[]>;
  history: Map<string, HistoryRow[]>;
  /** Ledger rows by run, then by step key, in insertion order. */
  ledger: Map<string, Map<string, LedgerRow[]>>;
  /** Keys of the business rows committed beside a start or signal made with `{ manager }`. */
  business: Set<string>;
  starts: StartRecord[];
  deliveries: DeliveryRecord[];
  rollbacks: RollbackRecord[];
  operations: OperatorRecord[];
  faults: FaultRecord[];
  samples: ListenSample[];
  stuck: StuckRun[];
  quietChecks: number;
}

export interface RunRow {
  id: string;
  status: string;
  parent_id: string | null;
  wait: unknown;
  wake_at: Date | null;
  attempt: number;
  output: string | null;
  created_at: Date;
  finished_at: Date | null;
  /** Set when retention deleted the run, with its parent's status at that moment (null: no parent, or deleted before it). */
  deleted_at: Date | null;
  parent_status: string | null;
}
export interface StepRow {
  key: string;
  kind: string;
  outcome: string;
  result: string | null;
  committedAt: number;
}
export interface SignalRow {
  run_id: string;
  name: string;
  payload: string | null;
  delivered_at: Date;
}
export interface MessageRow {
  run_id: string;
  key: string;
  seq: number;
  payload: string | null;
  acked_at: Date | null;
}
export interface HistoryRow {
  id: number;
  run_id: string;
  at: Date;
  event: string;
  actor: string;
  detail: Record<string, any> | null;
  committedAt: number;
}
export interface LedgerRow {
  id: number;
  run_id: string;
  step_key: string;
  pid: number;
  at: Date;
  detail: Record<string, any>;
}

/** A violation of a promise: which check, which run, what was seen. */
export interface Violation {
  check: string;
  runId?: string;
  message: string;
}

export async function loadEvidence(
  db: HarnessDb,
  harness: Pick<
    Evidence,
    | 'profile'
    | 'phases'
    | 'planned'
    | 'processes'
    | 'starts'
    | 'deliveries'
    | 'rollbacks'
    | 'operations'
    | 'faults'
    | 'samples'
    | 'stuck'
    | 'quietChecks'
  >,
): Promise<Evidence> {
  const [runs, steps, signals, messages, history, ledger, business] = await Promise.all([
    db.query<RunRow>(
      `SELECT id, status, parent_id, wait, wake_at, attempt, output, created_at, finished_at, NULL::timestamptz AS deleted_at, NULL::text AS parent_status FROM durable.runs
       UNION ALL SELECT id, status, parent_id, wait, wake_at, attempt, output, created_at, finished_at, deleted_at, parent_status FROM durable.archived_runs`,
    ),
    db.query<StepRow & { run_id: string; committed_us: string }>(withArchive('steps', 'run_id, key, kind, outcome, result')),
    db.query<SignalRow>(
      `SELECT run_id, name, payload, delivered_at FROM durable.signals UNION ALL SELECT run_id, name, payload, delivered_at FROM durable.archived_signals`,
    ),
    db.query<MessageRow>(
      `SELECT * FROM (SELECT run_id, key, seq::int AS seq, payload, acked_at FROM durable.messages WHERE channel = 'events'
       UNION ALL SELECT run_id, key, seq::int AS seq, payload, acked_at FROM durable.archived_messages WHERE channel = 'events') m ORDER BY run_id, seq`,
    ),
    db.query<HistoryRow & { committed_us: string }>(
      `SELECT * FROM (${withArchive('history', 'id::int AS id, run_id, at, event, actor, detail')}) h ORDER BY id`,
    ),
    db.query<LedgerRow>(`SELECT id::int AS id, run_id, step_key, pid, at, detail FROM ${ledgerTable(db.schema)} ORDER BY id`),
    db.query<{ key: string }>(`SELECT key FROM ${businessTable(db.schema)}`),
  ]);
  const runs2 = new Map<string, RunRow>();
  for (const r of runs) if (!runs2.has(r.id)) runs2.set(r.id, r); // live first: a run id started again after its deletion
  const steps2 = new Map<string, Map<string, StepRow>>();
  for (const s of steps) nested(steps2, s.run_id).set(s.key, { ...s, committedAt: Number(s.committed_us) / 1000 });
  const ledger2 = new Map<string, Map<string, LedgerRow[]>>();
  for (const l of ledger) list(nested(ledger2, l.run_id), l.step_key).push(l);
  const history2 = new Map<string, HistoryRow[]>();
  for (const h of history) list(history2, h.run_id).push({ ...h, committedAt: Number(h.committed_us) / 1000 });
  const messages2 = new Map<string, MessageRow[]>();
  for (const m of messages) list(messages2, m.run_id).push(m);
  return {
    ...harness,
    runs: runs2,
    business: new Set(business.map((b) => b.key)),
    steps: steps2,
    signals: new Map(signals.filter((s) => s.name === 'approval').map((s) => [s.run_id, s])),
    messages: messages2,
    history: history2,
    ledger: ledger2,
  };
}

/**
 * Live rows and archived ones of a journal table, each with the commit time of the transaction that
 * wrote it, oldest deletion first and live rows last: a key seen twice (a failed step that an operator
 * retry cleared, then its success) ends with its latest version.
 */
function withArchive(table: string, columns: string): string {
  return `SELECT * FROM (
            SELECT ${columns}, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000)::bigint AS committed_us, NULL::timestamptz AS deleted_at FROM durable.${table}
            UNION ALL SELECT ${columns}, committed_us, deleted_at FROM durable.archived_${table}) journal
          ORDER BY deleted_at NULLS LAST`;
}

/** The effect a step checkpoint stored (its pid and ledger row), or undefined for a step without one. */
export function storedEffect(step: StepRow | undefined): Effect | undefined {
  if (!step || step.kind !== 'step' || step.outcome !== 'ok') return undefined;
  const value = deserialize<Partial<Effect>>(step.result);
  return typeof value?.ledgerId === 'number' ? (value as Effect) : undefined;
}

/** The pid inside a worker id (`host:pid:random`), the lease owner and actor of worker writes. */
export function pidOf(workerId: string | null | undefined): number | undefined {
  const parts = workerId?.split(':');
  return parts && parts.length >= 3 ? Number(parts[parts.length - 2]) : undefined;
}

export { deserialize };

export function nested<K, K2, V>(map: Map<K, Map<K2, V>>, key: K): Map<K2, V> {
  let inner = map.get(key);
  if (!inner) map.set(key, (inner = new Map()));
  return inner;
}

export function list<K, V>(map: Map<K, V[]>, key: K): V[] {
  let inner = map.get(key);
  if (!inner) map.set(key, (inner = []));
  return inner;
}
