import { deserialize } from 'nestjs-durable/schema/serializer';
import type { Effect } from '../chaos.workflows';
import { ledgerTable } from '../chaos.workflows';
import type { HarnessDb } from '../db';
import type { DeliveryRecord, StartRecord } from '../driver';
import type { FaultRecord } from '../faults';
import type { ListenSample, StuckRun } from '../monitor';
import type { Profile } from '../profiles';

/** Everything the checks read: the library's tables, the ledger, and what the harness did and saw. */
export interface Evidence {
  profile: Profile;
  runs: Map<string, RunRow>;
  /** Steps by run, then by key; `committedAt` is the commit time of the row's transaction (ms, µs precision). */
  steps: Map<string, Map<string, StepRow>>;
  signals: Map<string, SignalRow>;
  messages: Map<string, MessageRow[]>;
  history: Map<string, HistoryRow[]>;
  /** Ledger rows by run, then by step key, in insertion order. */
  ledger: Map<string, Map<string, LedgerRow[]>>;
  starts: StartRecord[];
  deliveries: DeliveryRecord[];
  faults: FaultRecord[];
  samples: ListenSample[];
  stuck: StuckRun[];
  quietChecks: number;
}

export interface RunRow { id: string; status: string; parent_id: string | null; wait: unknown; wake_at: Date | null; attempt: number; output: string | null }
export interface StepRow { key: string; kind: string; outcome: string; result: string | null; committedAt: number }
export interface SignalRow { run_id: string; name: string; payload: string | null; delivered_at: Date }
export interface MessageRow { run_id: string; key: string; seq: number; payload: string | null; acked_at: Date | null }
export interface HistoryRow { id: number; run_id: string; at: Date; event: string; actor: string; detail: Record<string, any> | null; committedAt: number }
export interface LedgerRow { id: number; run_id: string; step_key: string; pid: number; at: Date; detail: Record<string, any> }

/** A violation of a promise: which check, which run, what was seen. */
export interface Violation {
  check: string;
  runId?: string;
  message: string;
}

export async function loadEvidence(
  db: HarnessDb,
  harness: Pick<Evidence, 'profile' | 'starts' | 'deliveries' | 'faults' | 'samples' | 'stuck' | 'quietChecks'>,
): Promise<Evidence> {
  const [runs, steps, signals, messages, history, ledger] = await Promise.all([
    db.query<RunRow>(`SELECT id, status, parent_id, wait, wake_at, attempt, output FROM durable.runs`),
    db.query<StepRow & { run_id: string; committed_us: string }>(
      `SELECT run_id, key, kind, outcome, result, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000)::bigint AS committed_us FROM durable.steps`,
    ),
    db.query<SignalRow>(`SELECT run_id, name, payload, delivered_at FROM durable.signals`),
    db.query<MessageRow>(`SELECT run_id, key, seq::int AS seq, payload, acked_at FROM durable.messages WHERE channel = 'events' ORDER BY run_id, seq`),
    db.query<HistoryRow & { committed_us: string }>(
      `SELECT id::int AS id, run_id, at, event, actor, detail, (extract(epoch FROM pg_xact_commit_timestamp(xmin)) * 1000000)::bigint AS committed_us FROM durable.history ORDER BY id`,
    ),
    db.query<LedgerRow>(`SELECT id::int AS id, run_id, step_key, pid, at, detail FROM ${ledgerTable(db.schema)} ORDER BY id`),
  ]);
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
    runs: new Map(runs.map((r) => [r.id, r])),
    steps: steps2,
    signals: new Map(signals.filter((s) => s.name === 'approval').map((s) => [s.run_id, s])),
    messages: messages2,
    history: history2,
    ledger: ledger2,
  };
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
