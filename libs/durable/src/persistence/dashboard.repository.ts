import type { ErrorInfo, RunStatus, WaitKind } from '../interfaces';
import { WAIT_KIND_NAMES } from '../wait-kinds/wait-kind.registry';
import { DurableDatabase } from './durable-database';
import { RUN_STATUSES } from './run.repository';

export interface RunJournalRows {
  steps: Array<{ key: string; kind: string; outcome: 'ok' | 'error'; result: string | null; error: ErrorInfo | null; started_at: Date | null; finished_at: Date }>;
  signals: Array<{ name: string; payload: string | null; delivered_at: Date; source: string | null }>;
  messages: Array<{ channel: string; key: string; seq: string; payload: string | null; sent_at: Date; acked_at: Date | null }>;
  children: Array<{ id: string; workflow: string; status: RunStatus; parent_step: string | null }>;
  parent: { id: string; workflow: string; status: RunStatus } | null;
  history: Array<{ id: string; at: Date; event: string; actor: string; detail: unknown }>;
}

export interface StatsRows {
  byStatus: Record<RunStatus, number>;
  waitingByKind: Record<WaitKind, number>;
  oldestWaiting: { id: string; workflow: string; wait: Record<string, unknown> } | null;
  overdue: { count: number; oldestDueAt: Date | null };
  instances: Array<{ id: string; started_at: Date; heartbeat_at: Date; last_sweep_at: Date | null; alive: boolean; leases: number; detail: unknown }>;
  lastSweepAt: Date | null;
  now: Date;
}

/** What operators read: a run's whole journal, and the figures that show the machinery is healthy. */
export class DashboardRepository {
  constructor(private readonly db: DurableDatabase) {}

  /** Everything recorded about one run, in one round trip. */
  async journal(runId: string): Promise<RunJournalRows> {
    const t = this.db.tables;
    const [row] = await this.db.query<RunJournalRows>(
      `SELECT
        (SELECT COALESCE(json_agg(s ORDER BY s.finished_at, s.key), '[]') FROM (SELECT key, kind, outcome, result, error, started_at, finished_at FROM ${t.steps} WHERE run_id = $1) s) AS steps,
        (SELECT COALESCE(json_agg(s ORDER BY s.delivered_at), '[]') FROM (SELECT name, payload, delivered_at, source FROM ${t.signals} WHERE run_id = $1) s) AS signals,
        (SELECT COALESCE(json_agg(m ORDER BY m.channel, m.seq), '[]') FROM (SELECT channel, key, seq, payload, sent_at, acked_at FROM ${t.messages} WHERE run_id = $1) m) AS messages,
        (SELECT COALESCE(json_agg(c ORDER BY c.seq), '[]') FROM (SELECT id, workflow, status, parent_step, seq FROM ${t.runs} WHERE parent_id = $1) c) AS children,
        (SELECT row_to_json(p) FROM (SELECT p.id, p.workflow, p.status FROM ${t.runs} r JOIN ${t.runs} p ON p.id = r.parent_id WHERE r.id = $1) p) AS parent,
        (SELECT COALESCE(json_agg(h ORDER BY h.id), '[]') FROM (SELECT id, at, event, actor, detail FROM ${t.history} WHERE run_id = $1 ORDER BY id DESC LIMIT 500) h) AS history`,
      [runId],
    );
    return row;
  }

  async stats(sweepIntervalMs: number, leaseMs: number): Promise<StatsRows> {
    const t = this.db.tables;
    const [row] = await this.db.query<{
      by_status: Array<{ status: RunStatus; n: number }>; by_kind: Array<{ kind: WaitKind; n: number }>;
      oldest: StatsRows['oldestWaiting']; overdue: number; oldest_due: Date | null; instances: Array<Record<string, unknown>>;
      last_sweep: Date | null; now: Date;
    }>(
      `SELECT now() AS now,
        (SELECT COALESCE(json_agg(json_build_object('status', status, 'n', n)), '[]') FROM (SELECT status, count(*) AS n FROM ${t.runs} GROUP BY status) s) AS by_status,
        (SELECT COALESCE(json_agg(json_build_object('kind', wait_kind, 'n', n)), '[]') FROM (SELECT wait_kind, count(*) AS n FROM ${t.runs} WHERE status = 'waiting' GROUP BY wait_kind) k) AS by_kind,
        (SELECT row_to_json(o) FROM (SELECT id, workflow, wait FROM ${t.runs} WHERE status = 'waiting' ORDER BY (wait->>'since')::timestamptz NULLS LAST LIMIT 1) o) AS oldest,
        (SELECT count(*) FROM ${t.runs} WHERE wake_at < now() - $1 * interval '1 millisecond')::int AS overdue,
        (SELECT min(wake_at) FROM ${t.runs} WHERE wake_at < now() - $1 * interval '1 millisecond') AS oldest_due,
        (SELECT COALESCE(json_agg(i ORDER BY i.started_at), '[]') FROM (
           SELECT i.id, i.started_at, i.heartbeat_at, i.last_sweep_at, i.detail, i.heartbeat_at > now() - $2 * interval '1 millisecond' AS alive,
                  (SELECT count(*) FROM ${t.runs} r WHERE r.status = 'running' AND r.lease_owner = i.id) AS leases
           FROM ${t.instances} i WHERE i.heartbeat_at > now() - interval '1 hour') i) AS instances,
        (SELECT max(last_sweep_at) FROM ${t.instances}) AS last_sweep`,
      [2 * sweepIntervalMs, leaseMs],
    );
    const byStatus = Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number>;
    for (const { status, n } of row.by_status) byStatus[status] = Number(n);
    const waitingByKind = Object.fromEntries(WAIT_KIND_NAMES.map((k) => [k, 0])) as Record<WaitKind, number>;
    for (const { kind, n } of row.by_kind) if (kind) waitingByKind[kind] = Number(n);
    return {
      byStatus,
      waitingByKind,
      oldestWaiting: row.oldest,
      overdue: { count: row.overdue, oldestDueAt: row.oldest_due },
      instances: row.instances as StatsRows['instances'],
      lastSweepAt: row.last_sweep,
      now: row.now,
    };
  }
}
