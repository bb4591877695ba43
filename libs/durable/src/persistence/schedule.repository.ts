import type { PoolClient } from 'pg';
import { controlChannel, KEY_FORMAT, queueChannel, wakeChannel } from '../durable.constants';
import { InvalidArgumentError } from '../errors';
import type { RunStatus, ScheduleSkipReason } from '../interfaces';
import type { ResolvedSchedule } from '../schema/schedule-spec';
import { DurableDatabase, READ_COMMITTED } from './durable-database';
import { NO_RUN_DAY } from './journal-partitions';
import { cancelSql, cancelTree } from './run-control.repository';
import { waitKindSql } from './sql/wait-kinds.sql';
import type { Tables } from './tables';

/** A schedule row as the service and the pass read it, with its last run's status and its skipped slots' count. */
export interface StoredSchedule {
  name: string;
  workflow: string;
  source: 'decorator' | 'api';
  cron: string;
  timezone: string;
  overlap: ResolvedSchedule['overlap'];
  catchup_window_ms: string;
  catchup: ResolvedSchedule['catchup'];
  input: string;
  jitter_ms: string;
  paused: boolean;
  workflow_missing: boolean;
  last_slot: Date;
  next_fire_at: Date | null;
  buffered_slot: Date | null;
  last_run_id: string | null;
  last_run_status: RunStatus | null;
  last_run_input: string | null;
  skipped: number;
}

/** What the pass reads of a due schedule (the columns decide and write look at). */
export type DueSchedule = Pick<
  StoredSchedule,
  | 'name'
  | 'workflow'
  | 'cron'
  | 'timezone'
  | 'overlap'
  | 'catchup_window_ms'
  | 'catchup'
  | 'input'
  | 'jitter_ms'
  | 'paused'
  | 'workflow_missing'
  | 'last_slot'
  | 'buffered_slot'
  | 'last_run_id'
  | 'last_run_status'
>;

/** A schedule as a trigger reads it: as a pass does, and when it is due next (which a trigger leaves). */
export type TriggeredSchedule = DueSchedule & Pick<StoredSchedule, 'next_fire_at'>;

/** A run a schedule starts: its id, its serialized input, and how long after now it is due (a slot's jitter). */
export interface ScheduledRun {
  id: string;
  input: string;
  delayMs: number;
  /** The starter's trace context (a trigger's); a slot has none. */
  traceContext?: string | null;
}

/** What the pass decided for one due schedule, written in the transaction that locked it. */
export interface ScheduleFiring {
  runs: ScheduledRun[];
  skips: Array<{ slot: Date; reason: ScheduleSkipReason }>;
  /** The unfinished run that `cancelOther` cancels before its new run starts. */
  cancel?: string;
  /** Who fired, in the runs' and the cancel's history: the schedule itself unless an operator triggered it. */
  actor?: string;
  lastSlot: Date;
  nextFireAt: Date | null;
  bufferedSlot: Date | null;
  lastRunId: string | null;
}

/**
 * What a firing wrote: the workflow of each run it started, and when those a jitter delayed start; the runs
 * its cancels stopped, and the workflow of each that had not ended.
 */
export interface Fired {
  started: string[];
  startsAt: Date[];
  cancelled: string[];
  ended: string[];
}

const ACTOR = (name: string) => `schedule:${name}`;

/**
 * The schedules table and its skipped slots. The pass locks the due schedules (`FOR UPDATE SKIP
 * LOCKED`, so instances sweeping together share them), inserts each slot's run by its deterministic
 * id, records the skipped slots and advances the schedule, all in one transaction.
 */
export class ScheduleRepository {
  private readonly sql: ReturnType<typeof statements>;

  constructor(private readonly db: DurableDatabase) {
    this.sql = statements(db.tables);
  }

  /** Inserts a new schedule due at once (the pass computes its first slot); false when the name is taken. */
  async create(s: ResolvedSchedule, source: 'decorator' | 'api', shiftMs: number): Promise<boolean> {
    const rows = await this.db.query(this.sql.create, [...specParams(s), source, s.paused, shiftMs]);
    return rows.length > 0;
  }

  /**
   * Replaces a schedule's spec (never its paused state) with the one `change` makes of the stored row,
   * read under the row's lock, so two changes at once each keep the other's fields; a `change` that throws
   * writes nothing. A changed cron or timezone counts its slots from now on, so the new cron never starts
   * runs for instants before the change. False when no schedule has the name.
   */
  async update(name: string, change: (row: StoredSchedule) => ResolvedSchedule, shiftMs: number): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const { rows } = await client.query<StoredSchedule>(`SELECT * FROM ${this.db.tables.schedules} WHERE name = $1 FOR UPDATE`, [name]);
      if (!rows.length) return false;
      await client.query(this.sql.update, [...specParams(change(rows[0])), shiftMs]);
      return true;
    }, READ_COMMITTED); // the lock's wait ends on the committed row, which a snapshot taken before it would not see
  }

  /**
   * Brings the decorators' schedules into the table, one instance at a time (a transaction-scoped
   * advisory lock): created when new, updated when their spec changed (never their paused state).
   * Any schedule whose workflow neither this instance (`workflows`: what it fires) nor a live one (its
   * heartbeat names its workflows, and whether it sweeps) fires, a decorator's or one made with create(), is
   * kept and flagged (held as through downtime), never deleted; the flag clears when an instance firing the
   * workflow boots (or `flagMissing` finds a live one firing it).
   */
  async reconcile(specs: ResolvedSchedule[], workflows: string[], shiftMs: number, leaseMs: number): Promise<void> {
    const t = this.db.tables;
    await this.db.transaction(async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, [this.reconciling]);
      const { rows } = await client.query<StoredSchedule>(`SELECT * FROM ${t.schedules} WHERE name = ANY($1::text[])`, [
        specs.map((s) => s.name),
      ]);
      const stored = new Map(rows.map((row) => [row.name, row]));
      for (const spec of specs) {
        const row = stored.get(spec.name);
        if (!row) await client.query(this.sql.create, [...specParams(spec), 'decorator', spec.paused, shiftMs]);
        else if (row.source !== 'decorator') {
          throw new InvalidArgumentError(
            `Schedule "${spec.name}" of workflow "${spec.workflow}" has the name of a schedule created with ScheduleService.create(); rename one of them.`,
          );
        } else if (specParams(spec).some((value, i) => String(value) !== String(specParams(fromRow(row))[i]))) {
          await client.query(this.sql.update, [...specParams(spec), shiftMs]);
        }
      }
      await client.query(this.sql.flagMissing, [workflows, leaseMs, shiftMs]);
    }, READ_COMMITTED); // the schedules read after the lock's wait are those the instance before it committed
  }

  /**
   * Decides every schedule's `workflowMissing` again, as `reconcile` does at boot, against `workflows`
   * (what this instance executes) and the live instances' heartbeats: a workflow whose last instance
   * left (a rollout that removed it) is flagged without waiting for a boot, and one that came back clears.
   */
  async flagMissing(workflows: string[], leaseMs: number, shiftMs: number): Promise<void> {
    await this.db.transaction(async (client) => {
      // Skipped while a reconcile (or another instance's check) holds the lock: two updates of the same
      // rows in different orders would deadlock, and a boot's reconcile decides the flags anyway.
      const [{ locked }] = (await client.query(`SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked`, [this.reconciling])).rows;
      if (locked) await client.query(this.sql.flagMissing, [workflows, leaseMs, shiftMs]);
    });
  }

  /** The advisory lock that serializes the decisions of workflowMissing: a boot's reconcile, a sweeper's check. */
  private get reconciling(): string {
    return `nestjs-durable:schedules:${this.db.tables.schema}`;
  }

  /**
   * Deletes the schedule, then its skipped slots in a statement of its own: the delete waits for a pass that
   * holds the row, and only a snapshot taken after that wait sees the skips the pass committed.
   */
  async delete(name: string): Promise<boolean> {
    return this.db.transaction(async (client) => {
      const { rowCount } = await client.query(`DELETE FROM ${this.db.tables.schedules} WHERE name = $1`, [name]);
      await client.query(`DELETE FROM ${this.db.tables.scheduleSkips} WHERE schedule = $1`, [name]);
      return (rowCount ?? 0) > 0;
    }, READ_COMMITTED); // as the pause: the wait for a pass ends on its committed row, no serialization failure
  }

  /** Pauses or resumes, recorded in history under `schedule:<name>` with the actor; false when there is no such schedule. */
  async setPaused(name: string, paused: boolean, actor: string): Promise<boolean> {
    return this.db.transaction(
      async (client) => (await client.query(this.sql.setPaused, [name, paused, actor, ACTOR(name)])).rows.length > 0,
      // On a database whose default is repeatable read, an update that waited for a pass holding the row fails (40001).
      READ_COMMITTED,
    );
  }

  async get(name: string): Promise<StoredSchedule | undefined> {
    const [row] = await this.db.query<StoredSchedule>(`${this.sql.select} WHERE s.name = $1`, [name]);
    return row;
  }

  async list(): Promise<StoredSchedule[]> {
    return this.db.query<StoredSchedule>(`${this.sql.select} ORDER BY s.name`);
  }

  /** The schedule's most recent skipped slots, newest first. */
  async skips(name: string, limit: number): Promise<Array<{ slot: Date; reason: ScheduleSkipReason; at: Date }>> {
    return this.db.query(`SELECT slot, reason, at FROM ${this.db.tables.scheduleSkips} WHERE schedule = $1 ORDER BY slot DESC LIMIT $2`, [
      name,
      limit,
    ]);
  }

  /** How many of these run ids exist already (a backfill's preview: those slots would be skipped). */
  async countExisting(ids: string[]): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.db.tables.runs} WHERE id = ANY($1::text[])`, [
      ids,
    ]);
    return row.n;
  }

  /** Inserts runs a schedule starts outside the pass (a backfill) into `queue`; the ids that were new. */
  async insertRuns(name: string, workflow: string, settings: ScheduledWorkflow, runs: ScheduledRun[], actor: string): Promise<string[]> {
    const records = runs.map((run) => runRecord(run, workflow, settings, actor, name));
    const ids: string[] = [];
    for (const part of byInputSize(records))
      for (const row of await this.db.query<{ id: string }>(this.sql.insertRuns, [JSON.stringify(part), ...this.channels]))
        ids.push(row.id);
    return ids;
  }

  /** Records an operator's action on a schedule in history, under `schedule:<name>`. */
  async audit(name: string, event: string, actor: string, detail: Record<string, unknown>): Promise<void> {
    await this.db.query(
      `INSERT INTO ${this.db.tables.history} (run_id, run_day, event, actor, detail) VALUES ($1, '${NO_RUN_DAY}', $2, $3, $4)`,
      [ACTOR(name), event, actor, JSON.stringify({ schedule: name, ...detail })],
    );
  }

  private get channel(): string {
    return wakeChannel(this.db.tables.schema);
  }

  /** The NOTIFY channels of new runs: the wake channel (a run id), the queue channel (a queue's name). */
  private get channels(): [string, string] {
    return [this.channel, queueChannel(this.db.tables.schema)];
  }

  /**
   * Milliseconds from the database's (shifted) now to the earliest next_fire_at of the schedules of
   * `workflows` (null when there is none), and how many of them are due now, counted up to `upTo`.
   */
  async nextDue(shiftMs: number, upTo: number, workflows: string[]): Promise<{ inMs: number | null; due: number }> {
    const [row] = await this.db.query<{ ms: number | null; due: number }>(this.sql.nextDue, [shiftMs, upTo, workflows]);
    return { inMs: row.ms === null ? null : Number(row.ms), due: row.due };
  }

  /**
   * One schedule pass: locks up to `batch` due schedules of `workflows` (those this instance executes:
   * their runs take its queue and timeout from the workflow's registration), asks `decide` for each
   * (given the database's now), and writes every decision in the same transaction. Returns what it
   * wrote (Fired): the runs its cancels stopped, to stop their executions here at once.
   */
  async fire(
    batch: number,
    shiftMs: number,
    workflows: string[],
    decide: (row: DueSchedule, now: Date) => ScheduleFiring,
    settingsOf: (workflow: string) => ScheduledWorkflow,
  ): Promise<Fired> {
    return this.db.transaction(async (client) => {
      // Locked first, read after, as fireNow: read by the locking statement, a schedule that a trigger
      // changed after that statement's snapshot came back with its new last run joined to no status (as
      // if ended), and overlap 'skip' started a slot beside the triggered run.
      const locked = await client.query<{ name: string }>(this.sql.lockDue, [batch, shiftMs, workflows]);
      if (!locked.rows.length) return { started: [], startsAt: [], cancelled: [], ended: [] };
      const names = locked.rows.map((row) => row.name);
      const { rows } = await client.query<DueSchedule & { db_now: number }>(this.sql.lockedDue, [names, shiftMs]);
      const now = new Date(rows[0].db_now); // the transaction's now: one instant for every row
      const firings = rows.map((row) => ({ row, firing: decide(row, now) }));
      return this.write(client, firings, settingsOf);
    }, READ_COMMITTED); // its cancels' cascade needs a snapshot per statement
  }

  /**
   * Fires one schedule now, outside its slots (a trigger): its row locked (waiting for a pass that holds
   * it), then read, so `decide` sees its last run as that pass left it, at the database's now; the
   * decision is written as a pass writes its own. Null when there is no such schedule, else what it
   * wrote (Fired); what `decide` throws writes nothing.
   */
  async fireNow(
    name: string,
    shiftMs: number,
    decide: (row: TriggeredSchedule, now: Date) => ScheduleFiring,
    settingsOf: (workflow: string) => ScheduledWorkflow,
  ): Promise<Fired | null> {
    return this.db.transaction(async (client) => {
      // Locked first, read after: a read that waited in its own lock would join the last run the pass replaced.
      if (!(await client.query(this.sql.lockOne, [name])).rows.length) return null;
      const [row] = (await client.query<TriggeredSchedule & { db_now: number }>(this.sql.one, [name, shiftMs])).rows;
      return this.write(client, [{ row, firing: decide(row, new Date(row.db_now)) }], settingsOf);
    }, READ_COMMITTED);
  }

  /**
   * Writes a batch's decisions in four statements whatever its size (cancels aside, which are rare):
   * the cancels of `cancelOther`, then every new run, every skipped slot, every schedule's advance.
   */
  private async write(
    client: PoolClient,
    firings: Array<{ row: DueSchedule; firing: ScheduleFiring }>,
    settingsOf: (workflow: string) => ScheduledWorkflow,
  ): Promise<Fired> {
    const [wake, queue] = this.channels;
    const control = controlChannel(this.db.tables.schema);
    const cancelled: string[] = [];
    const ended: string[] = [];
    for (const { row, firing } of firings) {
      if (!firing.cancel) continue;
      const done = await cancelTree(client, this.db.tables, this.sql.cancel, [
        firing.cancel,
        `Cancelled by schedule "${row.name}": a newer run of it started (overlap: cancelOther).`,
        firing.actor ?? ACTOR(row.name),
        wake,
        'overlap',
        queue,
        control,
      ]);
      cancelled.push(...done.changed);
      ended.push(...done.ended);
    }
    const runs = firings.flatMap(({ row, firing }) => {
      const settings = settingsOf(row.workflow);
      return firing.runs.map((run) => runRecord(run, row.workflow, settings, firing.actor ?? ACTOR(row.name), row.name));
    });
    /** The workflow of each run started (a slot another instance fired starts nothing here). */
    const started: string[] = [];
    const startsAt: Date[] = [];
    for (const part of byInputSize(runs))
      for (const row of (
        await client.query<{ workflow: string; starts_at: Date | null }>(this.sql.insertRuns, [JSON.stringify(part), ...this.channels])
      ).rows) {
        started.push(row.workflow);
        if (row.starts_at) startsAt.push(row.starts_at);
      }
    // Instants as epoch milliseconds: JSON.stringify of an object holding a Date leaves its fast path.
    const skips = firings.flatMap(({ row, firing }) =>
      firing.skips.map((skip) => ({ schedule: row.name, slot: skip.slot.getTime(), reason: skip.reason })),
    );
    if (skips.length) await client.query(this.sql.insertSkips, [JSON.stringify(skips)]);
    const advances = firings.map(({ row, firing }) => ({
      name: row.name,
      last_slot: firing.lastSlot.getTime(),
      next_fire_at: firing.nextFireAt?.getTime() ?? null,
      buffered_slot: firing.bufferedSlot?.getTime() ?? null,
      last_run_id: firing.lastRunId,
    }));
    await client.query(this.sql.advance, [JSON.stringify(advances)]);
    return { started, startsAt, cancelled, ended };
  }
}

const fromRow = (row: StoredSchedule): ResolvedSchedule => ({
  name: row.name,
  workflow: row.workflow,
  cron: row.cron,
  timezone: row.timezone,
  overlap: row.overlap,
  catchupWindowMs: Number(row.catchup_window_ms),
  catchup: row.catchup,
  input: row.input,
  jitterMs: Number(row.jitter_ms),
  paused: row.paused,
});
const specParams = (s: ResolvedSchedule) => [
  s.name,
  s.workflow,
  s.cron,
  s.timezone,
  s.overlap,
  s.catchupWindowMs,
  s.catchup,
  s.input,
  s.jitterMs,
];
/** What a schedule's runs take from their workflow: its queue, and its timeout (counted from each run's first execution). */
export interface ScheduledWorkflow {
  queue: string | null;
  timeoutMs: number | null;
  /** The application's version, stamped on the run. */
  appVersion: string | null;
}
/** A run to insert as insertRuns reads it: one object per run, the batch sent as one JSON array. */
const runRecord = (run: ScheduledRun, workflow: string, settings: ScheduledWorkflow, actor: string, schedule: string) => ({
  id: run.id,
  input: run.input,
  delay: run.delayMs,
  workflow,
  actor,
  schedule,
  queue: settings.queue,
  timeout_ms: settings.timeoutMs,
  app_version: settings.appVersion,
  trace_context: run.traceContext ?? null,
});

/**
 * The most input (characters) one insertRuns statement carries: its runs travel as one jsonb value,
 * which holds at most 256 MiB, and a catch-up or backfill of many slots of a large input (each up to
 * 4 MiB) would exceed it. Escaped and in UTF-8, 16 Mi characters stay under 100 MiB.
 */
export const MAX_INPUT_PER_STATEMENT = 16 * 1024 * 1024;

/** `runs` in consecutive parts of at most `max` characters of input each (a run larger alone is a part of its own). */
export function byInputSize<T extends { input: string }>(runs: T[], max = MAX_INPUT_PER_STATEMENT): T[][] {
  const parts: T[][] = [];
  let part: T[] = [];
  let size = 0;
  for (const run of runs) {
    if (part.length && size + run.input.length > max) {
      parts.push(part);
      part = [];
      size = 0;
    }
    part.push(run);
    size += run.input.length;
  }
  if (part.length) parts.push(part);
  return parts;
}

function statements(t: Tables) {
  const shiftedNow = (param: string) => `(now() + ${param}::bigint * interval '1 millisecond')`;
  // Schedules as a pass reads them (DueSchedule), the last run's status deciding overlap, and the database's
  // (shifted) now. Only what it reads: a crowd of 10,000 spent more in parsing timestamps it never used than in its writes.
  const dueSchedules = (shift: string, more = '') => `
      SELECT s.name, s.workflow, s.cron, s.timezone, s.overlap, s.catchup_window_ms, s.catchup, s.input, s.jitter_ms,${more}
             s.paused, s.workflow_missing,
             s.last_slot, s.buffered_slot, s.last_run_id, r.status AS last_run_status,
             (extract(epoch FROM ${shiftedNow(shift)}) * 1000)::float8 AS db_now
      FROM ${t.schedules} s LEFT JOIN ${t.runs} r ON r.id = s.last_run_id`;
  return {
    // $1..$9 the spec, $10 source, $11 paused, $12 the test clock's shift (0 in production).
    create: `
      INSERT INTO ${t.schedules} (name, workflow, cron, timezone, overlap, catchup_window_ms, catchup, input, jitter_ms, source, paused, last_slot, next_fire_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, ${shiftedNow('$12')}, ${shiftedNow('$12')})
      ON CONFLICT (name) DO NOTHING RETURNING name`,
    // A buffered slot is dropped, and recorded as skipped for overlap, when the change leaves 'bufferOne' or
    // counts the slots from now (a new cron or timezone): it would start a run under the old rules.
    update: `
      -- FOR UPDATE: after waiting for a pass that holds the row, the row as the pass left it (a reconcile has not locked it).
      WITH old AS (SELECT name, buffered_slot, cron, timezone FROM ${t.schedules} WHERE name = $1 FOR UPDATE),
      changed AS (
        UPDATE ${t.schedules} s
        SET last_slot = CASE WHEN old.cron IS DISTINCT FROM $3 OR old.timezone IS DISTINCT FROM $4 THEN greatest(s.last_slot, ${shiftedNow('$10')}) ELSE s.last_slot END,
            buffered_slot = CASE WHEN $5::text <> 'bufferOne' OR old.cron IS DISTINCT FROM $3 OR old.timezone IS DISTINCT FROM $4 THEN NULL ELSE s.buffered_slot END,
            workflow = $2, cron = $3, timezone = $4, overlap = $5, catchup_window_ms = $6, catchup = $7, input = $8, jitter_ms = $9,
            next_fire_at = CASE WHEN s.workflow_missing THEN NULL ELSE ${shiftedNow('$10')} END, updated_at = now()
        FROM old WHERE s.name = old.name
        RETURNING s.name, old.buffered_slot AS was, s.buffered_slot AS kept
      ), dropped AS (
        INSERT INTO ${t.scheduleSkips} (schedule, slot, reason)
        SELECT name, was, 'overlap' FROM changed WHERE was IS NOT NULL AND kept IS NULL
        ON CONFLICT (schedule, slot) DO NOTHING
      )
      SELECT name FROM changed`,
    setPaused: `
      WITH changed AS (UPDATE ${t.schedules} SET paused = $2, updated_at = now() WHERE name = $1 RETURNING name)
      INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
      SELECT $4, '${NO_RUN_DAY}', CASE WHEN $2 THEN 'schedule-paused' ELSE 'schedule-resumed' END, $3, jsonb_build_object('schedule', $1::text) FROM changed
      RETURNING run_id`,
    // A schedule whose workflow neither this instance ($1, what it registers) nor a live one fires (the
    // `workflows` of a heartbeat within a lease, $2 ms, unless it says its sweeper is off: only a sweeper
    // fires, and only its own workflows' schedules) is flagged, whatever its source (a create()-made one
    // left unflagged inserted a run per slot that nobody claimed); one some instance fires is cleared. Live
    // instances count: an old instance restarted during a rollout must not hold a new workflow's schedules
    // while new instances execute it. The flag holds a schedule as downtime does: due never, so no pass starts
    // or skips its slots (a pass fires only its own workflows' schedules anyway); a cleared one is due at once
    // ($3, the test clock's shift), so its catch-up and pause decide the slots it was held through.
    flagMissing: `
      WITH executed AS (
        SELECT unnest($1::text[]) AS workflow
        UNION
        SELECT jsonb_array_elements_text(i.detail -> 'workflows') FROM ${t.instances} i
        WHERE i.heartbeat_at > now() - $2::bigint * interval '1 millisecond' AND jsonb_typeof(i.detail -> 'workflows') = 'array'
          AND i.detail -> 'sweeps' IS DISTINCT FROM 'false'::jsonb
      ), decided AS (
        SELECT s.name, NOT EXISTS (SELECT 1 FROM executed e WHERE e.workflow = s.workflow) AS missing FROM ${t.schedules} s
      )
      UPDATE ${t.schedules} s
      SET workflow_missing = d.missing, next_fire_at = CASE WHEN d.missing THEN NULL ELSE ${shiftedNow('$3')} END,
          updated_at = now()
      FROM decided d WHERE s.name = d.name AND s.workflow_missing <> d.missing`,
    select: `
      SELECT s.*, r.status AS last_run_status, r.input AS last_run_input,
             (SELECT count(*)::int FROM ${t.scheduleSkips} k WHERE k.schedule = s.name) AS skipped
      FROM ${t.schedules} s LEFT JOIN ${t.runs} r ON r.id = s.last_run_id`,
    // $1 the test clock's shift, $2 the most due ones to count, $3 the workflows this instance executes. The
    // index's first entry of those workflows, and its range up to now (schedules_due_idx).
    nextDue: `
      SELECT extract(epoch FROM min(next_fire_at) - ${shiftedNow('$1')}) * 1000 AS ms,
             (SELECT count(*) FROM (
                SELECT 1 FROM ${t.schedules} WHERE next_fire_at <= ${shiftedNow('$1')} AND workflow = ANY($3::text[]) LIMIT $2
              ) d)::int AS due
      FROM ${t.schedules} WHERE workflow = ANY($3::text[])`,
    // $1 batch, $2 the test clock's shift, $3 the workflows this instance executes. The due ones, locked.
    lockDue: `
      SELECT name FROM ${t.schedules}
      WHERE next_fire_at <= ${shiftedNow('$2')} AND workflow = ANY($3::text[])
      ORDER BY next_fire_at LIMIT $1
      FOR UPDATE SKIP LOCKED`,
    // $1 the names lockDue locked, $2 the test clock's shift: what decides their slots, read after the lock.
    lockedDue: `${dueSchedules('$2')} WHERE s.name = ANY($1::text[])`,
    // $1 a name: a trigger's schedule, locked (lockOne) then read (one).
    lockOne: `SELECT 1 FROM ${t.schedules} WHERE name = $1 FOR UPDATE`,
    // $1 a name, $2 the test clock's shift.
    one: `${dueSchedules('$2', ' s.next_fire_at,')} WHERE s.name = $1`,
    // ON CONFLICT DO NOTHING: a slot another instance fired already starts nothing here. A delayed
    // run (a slot's jitter) waits like a delayed start (kind 'start') and is not NOTIFYed. A run of a
    // queued workflow enters its queue (admission takes it) and NOTIFYs the queue's name.
    // $1 the runs, a JSON array of runRecord: delay in ms (> 0 waits as a delayed start), timeout_ms
    // counted from the first execution; $2 the wake channel, $3 the queue channel.
    insertRuns: `
      WITH r AS (
        SELECT * FROM jsonb_to_recordset($1::jsonb)
          AS r(id text, input text, delay bigint, workflow text, actor text, schedule text, queue text, timeout_ms bigint, app_version text, trace_context text)
      ), ins AS (
        INSERT INTO ${t.runs} (id, workflow, status, input, wake_at, wait, wait_kind, queue, timeout_ms, app_version, trace_context, key_format)
        SELECT r.id, r.workflow, CASE WHEN r.delay > 0 THEN 'waiting' ELSE 'pending' END, r.input, u.until,
               CASE WHEN r.delay > 0 THEN jsonb_build_object('kind', ${waitKindSql('start')}, 'until', u.until, 'since', now()) END,
               CASE WHEN r.delay > 0 THEN ${waitKindSql('start')} END, r.queue, r.timeout_ms, r.app_version, r.trace_context, ${KEY_FORMAT}
        FROM r, LATERAL (SELECT date_trunc('milliseconds', now() + r.delay * interval '1 millisecond') AS until) u
        ON CONFLICT (id) DO NOTHING
        RETURNING id, run_day, status, queue, workflow, wake_at
      ), history AS (
        INSERT INTO ${t.history} (run_id, run_day, event, actor, detail)
        SELECT ins.id, ins.run_day, 'started', r.actor, jsonb_build_object('schedule', r.schedule) FROM ins JOIN r ON r.id = ins.id
      )
      SELECT id, workflow, (SELECT 1 FROM pg_notify(CASE WHEN ins.queue IS NULL THEN $2 ELSE $3 END, COALESCE(ins.queue, ins.id))
                  WHERE ins.status = 'pending') AS notified,
             CASE WHEN ins.status = 'waiting' THEN ins.wake_at END AS starts_at
      FROM ins`,
    // $1 the skipped slots, a JSON array of { schedule, slot (epoch ms), reason }. Batches travel as
    // JSON: one JSON.stringify costs less than the driver's array literals of thousands of elements.
    insertSkips: `
      INSERT INTO ${t.scheduleSkips} (schedule, slot, reason)
      SELECT k.schedule, to_timestamp(k.slot / 1000.0), k.reason FROM jsonb_to_recordset($1::jsonb) AS k(schedule text, slot bigint, reason text)
      ON CONFLICT (schedule, slot) DO NOTHING`,
    // $1 one object per schedule: { name, last_slot, next_fire_at, buffered_slot (epoch ms), last_run_id }.
    advance: `
      UPDATE ${t.schedules} s
      SET last_slot = to_timestamp(a.last_slot / 1000.0), next_fire_at = to_timestamp(a.next_fire_at / 1000.0),
          buffered_slot = to_timestamp(a.buffered_slot / 1000.0), last_run_id = a.last_run_id, updated_at = now()
      FROM jsonb_to_recordset($1::jsonb) AS a(name text, last_slot bigint, next_fire_at bigint, buffered_slot bigint, last_run_id text)
      WHERE s.name = a.name`,
    cancel: cancelSql(t),
  };
}
