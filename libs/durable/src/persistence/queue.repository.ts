import type { QueueCause, QueueView, WaitReason } from '../interfaces';
import type { ResolvedQueue } from '../queues/queue-config';
import { DurableDatabase, READ_COMMITTED } from './durable-database';
import { ClaimedRow, claimedFromRow, ClaimedRun } from './run.repository';
import { ADMISSION_PLANS_SQL, admitQueuedSql, lockQueuesSql, promoteDueSql, queuesWithWorkSql } from './sql/admit-queued.sql';
import { mendSlotsSql } from './sql/mend-queue-slots.sql';
import { notUnbegunPastDeadlineSql } from './sql/expire-unbegun.sql';

/** Queued runs whose time came that one admission pass moves to pending, at most. */
const PROMOTE_PER_PASS = 1_000;
/** How deep admission reads a queue's order before it looks at partitions one by one (see admitQueuedSql). */
const HEAD_DEPTH = 1_000;
/** The partitions GET /queues lists per queue. */
const TOP_PARTITIONS = 10;
/** How many runs ahead of a pending run a read counts, at most: a deeper place reads as this + 1. */
const POSITION_COUNTED = 10_000;
/** How many pending runs of a queue this instance does not declare GET /queues counts, at most. */
const UNDECLARED_COUNTED = 10_000;

/** A pending run of a queue, as its wait reason is worked out. */
export interface QueuedRow {
  id: string;
  queue: string;
  partition_key: string | null;
}

/** Flow control: admission of queued runs (see admitQueuedSql), and what the queues look like. */
export class QueueRepository {
  private readonly sql;

  /**
   * The queue that admitted first in the last pass: the next starts after it by name (wrapping), so each
   * queue with work comes first in turn, whichever queues each pass looks at (a queue first by name
   * would take every `ask` while it has a backlog).
   */
  private lastFirst = '';

  constructor(private readonly db: DurableDatabase) {
    const t = db.tables;
    this.sql = { withWork: queuesWithWorkSql(t), promote: promoteDueSql(t), admit: admitQueuedSql(t), mend: mendSlotsSql(t) };
  }

  /**
   * Admits up to `ask` runs of these queues for `owner`: one transaction that takes the lock of each
   * queue with work (in name order, with its BEGIN), moves their due waiting runs to pending (when
   * there are any), then admits queue by queue. Without `probe` the queues are known to have new
   * pending runs (their NOTIFY or a local start said so): no look which have work, no promotion, and
   * their slots are not mended (mendSlotsSql: boot and the sweeper's passes do it).
   * `heldBack`: the queues where a limit left pending runs behind (or that admitted none although they
   * had work), worth another admission when a slot frees.
   */
  async admit(
    queues: readonly ResolvedQueue[],
    owner: string,
    leaseMs: number,
    ask: number,
    workflows: string[],
    { probe }: { probe: boolean },
  ): Promise<{ claimed: ClaimedRun[]; heldBack: string[] }> {
    const withWork = probe
      ? await this.db.query<{ queue: string; due: boolean }>(this.sql.withWork, [queues.map((q) => q.name)])
      : queues.map((q) => ({ queue: q.name, due: false }));
    if (!withWork.length) return { claimed: [], heldBack: [] };
    const busy = withWork.map((w) => w.queue).sort();
    const due = withWork.filter((w) => w.due).map((w) => w.queue);
    const byName = new Map(queues.map((q) => [q.name, q]));
    const heldBack: string[] = [];
    const claimed = await this.db.transaction(
      async (client) => {
        // Slots first: this holds no run's row yet, so it cannot deadlock with an end giving one back.
        if (probe) for (const name of busy) await this.mend(byName.get(name)!, (sql, params) => client.query(sql, params));
        if (due.length) await client.query(this.sql.promote, [due, PROMOTE_PER_PASS]);
        const claimed: ClaimedRun[] = [];
        // Locked in name order (with the BEGIN), admitted from a turning start: every queue with work gets its turn.
        const first = Math.max(
          0,
          busy.findIndex((name) => name > this.lastFirst),
        );
        this.lastFirst = busy[first];
        for (const name of [...busy.slice(first), ...busy.slice(0, first)]) {
          if (claimed.length >= ask) break;
          const q = byName.get(name)!;
          const { rows } = await client.query<ClaimedRow & { id: string; lateness: number; held_back: boolean }>(
            this.db.statement(this.sql.admit, [
              q.name,
              q.concurrency,
              q.partitionConcurrency,
              q.rateLimit?.limit ?? null,
              q.rateLimit?.periodMs ?? null,
              ask - claimed.length,
              workflows,
              owner,
              leaseMs,
              HEAD_DEPTH,
            ]),
          );
          if (!rows.length || rows[0].held_back) heldBack.push(name);
          const answeredAt = Date.now();
          claimed.push(...rows.map((r) => claimedFromRow(r.id, r, answeredAt, Number(r.lateness), q.name)));
        }
        return claimed;
      },
      // READ COMMITTED whatever the database's default: the admission's snapshot must be taken after the queue's lock.
      `${READ_COMMITTED}; ${lockQueuesSql(this.db.tables.schema, busy)}; ${ADMISSION_PLANS_SQL}`,
    );
    return { claimed, heldBack };
  }

  /**
   * Makes the slots of these queues whole (mendSlotsSql), at boot: a start can then take one before any
   * admission pass has run. Safe without the queue's lock, like the starts that take slots.
   */
  async mendSlots(queues: readonly ResolvedQueue[]): Promise<void> {
    for (const q of queues) await this.mend(q, (sql, params) => this.db.query(sql, params));
  }

  private async mend(q: ResolvedQueue, query: (sql: string, params: unknown[]) => Promise<unknown>): Promise<void> {
    if (q.concurrency === null) return;
    for (const sql of this.sql.mend) await query(sql, [q.name, q.concurrency]);
  }

  /** Each queue's limits, running and pending runs (by cause), deepest partitions and rate window (GET /queues). */
  async views(queues: readonly ResolvedQueue[]): Promise<QueueView[]> {
    const t = this.db.tables;
    const views: QueueView[] = [];
    for (const q of queues) {
      const [row] = await this.db.query<{
        running: number;
        pending: number;
        recent: number | null;
        partitions: Array<{ key: string; running: number; pending: number }>;
        held_by_partition: number;
      }>(
        `WITH parts AS (
           SELECT partition_key AS key, count(*)::int AS pending FROM ${t.runs}
           WHERE queue = $1 AND status = 'pending' AND partition_key IS NOT NULL GROUP BY partition_key
         ), part_running AS (
           SELECT partition_key AS key, count(*)::int AS running FROM ${t.runs}
           WHERE queue = $1 AND status = 'running' AND partition_key IS NOT NULL GROUP BY partition_key
         )
         SELECT (SELECT count(*)::int FROM ${t.runs} WHERE queue = $1 AND status = 'running') AS running,
                (SELECT count(*)::int FROM ${t.runs} WHERE queue = $1 AND status = 'pending') AS pending,
                CASE WHEN $2::bigint IS NULL THEN NULL
                     ELSE (SELECT count(*)::int FROM ${t.runs} WHERE queue = $1 AND began_at > now() - $2::bigint * interval '1 millisecond') END AS recent,
                (SELECT COALESCE(json_agg(p ORDER BY p.pending DESC, p.key), '[]') FROM (
                   SELECT parts.key, parts.pending, COALESCE(pr.running, 0) AS running FROM parts LEFT JOIN part_running pr USING (key)
                   ORDER BY parts.pending DESC, parts.key LIMIT $3) p) AS partitions,
                (SELECT COALESCE(sum(parts.pending), 0)::int FROM parts JOIN part_running pr USING (key) WHERE pr.running >= $4::int) AS held_by_partition`,
        [q.name, q.rateLimit?.periodMs ?? null, TOP_PARTITIONS, q.partitionConcurrency ?? 2_147_483_647],
      );
      const pending: Record<QueueCause, number> = { concurrency: 0, partition: 0, rate: 0 };
      const rest = row.pending - row.held_by_partition;
      pending.partition = row.held_by_partition;
      pending[this.causeOf(q, row.running, row.recent)] += rest;
      views.push({
        name: q.name,
        concurrency: q.concurrency,
        partitionConcurrency: q.partitionConcurrency,
        rateLimit: q.rateLimit,
        running: row.running,
        pending,
        partitions: row.partitions,
        rateWindowUsed: row.recent,
      });
    }
    return views;
  }

  /**
   * The wait reasons of pending queued runs (read, never stored): `undeclared` when this instance
   * declares no such queue, `partition` when its partition is at its limit, `rate` when the window is
   * used up and the queue has room, else `concurrency`.
   */
  async reasons(
    queues: ReadonlyMap<string, ResolvedQueue>,
    rows: readonly QueuedRow[],
    since: Map<string, Date>,
  ): Promise<Map<string, WaitReason>> {
    const reasons = new Map<string, WaitReason>();
    if (!rows.length) return reasons;
    const t = this.db.tables;
    const names = [...new Set(rows.map((r) => r.queue))];
    const counts = await this.db.query<{ queue: string; partition_key: string | null; running: number }>(
      `SELECT queue, partition_key, count(*)::int AS running FROM ${t.runs} WHERE queue = ANY($1::text[]) AND status = 'running' GROUP BY queue, partition_key`,
      [names],
    );
    const recent = new Map<string, number>();
    for (const name of names) {
      const period = queues.get(name)?.rateLimit?.periodMs;
      if (period === undefined) continue;
      const [row] = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${t.runs} WHERE queue = $1 AND began_at > now() - $2::bigint * interval '1 millisecond'`,
        [name, period],
      );
      recent.set(name, row.n);
    }
    for (const r of rows) {
      const q = queues.get(r.queue);
      const running = counts.filter((c) => c.queue === r.queue).reduce((sum, c) => sum + c.running, 0);
      const inPartition = counts.find((c) => c.queue === r.queue && c.partition_key === r.partition_key)?.running ?? 0;
      const cause: QueueCause | 'undeclared' = !q
        ? 'undeclared'
        : q.partitionConcurrency !== null && r.partition_key !== null && inPartition >= q.partitionConcurrency
          ? 'partition'
          : this.causeOf(q, running, recent.get(r.queue) ?? null);
      reasons.set(r.id, {
        kind: 'queue',
        queue: r.queue,
        cause,
        ...(r.partition_key !== null ? { partitionKey: r.partition_key } : {}),
        since: since.get(r.id) ?? new Date(),
      });
    }
    return reasons;
  }

  /**
   * The queues, other than `declared`, that hold pending runs: one index probe per queue found (a loose
   * scan of runs_queue_pending_idx), however deep their backlogs.
   */
  async undeclaredWithPending(declared: readonly string[]): Promise<string[]> {
    const t = this.db.tables;
    const pending = `FROM ${t.runs} WHERE status = 'pending' AND queue IS NOT NULL`;
    const rows = await this.db.query<{ queue: string }>(
      `WITH RECURSIVE found AS (
         (SELECT queue ${pending} ORDER BY queue LIMIT 1)
         UNION ALL
         SELECT (SELECT queue ${pending} AND queue > found.queue ORDER BY queue LIMIT 1) FROM found WHERE found.queue IS NOT NULL
       )
       SELECT queue FROM found WHERE queue IS NOT NULL AND NOT (queue = ANY($1::text[]))`,
      [declared],
    );
    return rows.map((r) => r.queue);
  }

  /**
   * A pending run's place in line (1: next), in admission's order (priority, then since when it has been due,
   * then id): among its partition's pending runs when its queue limits partitions (`partitioned`: its partition
   * is what it waits on, and other partitions' runs are admitted beside it), else among its queue's; runs past a
   * deadline before they began are left out (admission passes them over; the sweeper fails them). One range
   * scan of the pending index, at most POSITION_COUNTED rows read (a deeper place reads POSITION_COUNTED + 1);
   * undefined when the run is not pending in a queue.
   */
  async position(runId: string, partitioned: boolean): Promise<number | undefined> {
    const t = this.db.tables;
    const [row] = await this.db.query<{ ahead: number; read: number }>(
      `WITH me AS (SELECT id, queue, partition_key, priority, wake_at FROM ${t.runs} WHERE id = $1 AND status = 'pending' AND queue IS NOT NULL),
       before AS (
         SELECT o.began_at, o.deadline FROM ${t.runs} o, me
         WHERE o.queue = me.queue AND o.status = 'pending' ${partitioned ? 'AND o.partition_key = me.partition_key' : ''}
           AND (o.priority, o.wake_at) <= (me.priority, me.wake_at) AND ((o.priority, o.wake_at) < (me.priority, me.wake_at) OR o.id < me.id)
         ORDER BY o.priority, o.wake_at LIMIT $2
       )
       SELECT (SELECT count(*)::int FROM before o WHERE ${notUnbegunPastDeadlineSql('now()', 'o.')}) AS ahead,
              (SELECT count(*)::int FROM before) AS read
       FROM me`,
      [runId, POSITION_COUNTED],
    );
    if (!row) return undefined;
    return row.read === POSITION_COUNTED ? POSITION_COUNTED + 1 : row.ahead + 1;
  }

  /**
   * The queues other than `declared` that hold pending runs, with how many (counted up to UNDECLARED_COUNTED:
   * `atLeast` past it): a deploy that removed or renamed a queue strands them (only an instance that declares it
   * admits them).
   */
  async undeclaredBacklogs(declared: readonly string[]): Promise<Array<{ name: string; pending: number; atLeast: boolean }>> {
    const backlogs = [];
    for (const name of await this.undeclaredWithPending(declared)) {
      const [{ n }] = await this.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${this.db.tables.runs} WHERE queue = $1 AND status = 'pending' LIMIT $2) s`,
        [name, UNDECLARED_COUNTED + 1],
      );
      // Drained since it was found: none to name.
      if (n > 0) backlogs.push({ name, pending: Math.min(n, UNDECLARED_COUNTED), atLeast: n > UNDECLARED_COUNTED });
    }
    return backlogs;
  }

  private causeOf(q: ResolvedQueue, running: number, recent: number | null): QueueCause {
    if (q.concurrency !== null && running >= q.concurrency) return 'concurrency';
    if (q.rateLimit && recent !== null && recent >= q.rateLimit.limit) return 'rate';
    return 'concurrency';
  }
}
