import { Injectable } from '@nestjs/common';
import { InvalidArgumentError, ScheduleNotFoundError } from '../errors';
import type { ActorOptions, RunHandle, ScheduleSkip, ScheduleSpec, ScheduleView, TriggerOptions, WorkflowRef } from '../interfaces';
import { ScheduleRepository, StoredSchedule } from '../persistence/schedule.repository';
import { DurableTelemetry } from '../observability/durable-telemetry';
import { RunRepository } from '../persistence/run.repository';
import { DbClock } from '../runtime/db-clock';
import { WakeBus } from '../runtime/wake-bus';
import { scheduledWorkflow, WorkflowRegistry } from '../runtime/workflow.registry';
import {
  cronOf,
  MAX_BACKFILL_SLOTS,
  resolveScheduleSpec,
  SCHEDULE_OVERLAPS,
  scheduleRunPrefix,
  slotRunId,
  slotRunInput,
  slotsBetween,
} from '../schema/schedule-spec';
import { deserialize } from '../schema/serializer';
import { DurableWorker } from '../worker/durable.worker';
import { triggered } from '../worker/schedule-pass';
import { WakeSweeper } from '../worker/wake-sweeper';
import { actorOf } from './actor';
import { CALL_OPTIONS, checkCallOptions } from './call-options';
import { DurableRunHandle } from './run-handle';
import { generatedRunId } from './run-id';

/**
 * Durable cron schedules at runtime: create, change, pause, trigger and backfill them, and read them
 * back. Schedules declared on `@Workflow` are reconciled at boot; both kinds fire from the sweeper.
 * A call given an option it does not take (a misspelt one) throws InvalidArgumentError naming it, before anything is read or written.
 */
@Injectable()
export class ScheduleService {
  constructor(
    private readonly schedules: ScheduleRepository,
    private readonly registry: WorkflowRegistry,
    private readonly worker: DurableWorker,
    private readonly clock: DbClock,
    private readonly sweeper: WakeSweeper,
    private readonly runs: RunRepository,
    private readonly bus: WakeBus,
    private readonly telemetry: DurableTelemetry,
  ) {}

  /** A new schedule (InvalidArgumentError when the spec is wrong or the name is taken); its first slot is the next after now. */
  async create(spec: ScheduleSpec & { workflow: WorkflowRef<any, any> }): Promise<ScheduleView> {
    const workflow = this.registry.resolve(spec?.workflow).name;
    const { workflow: _workflow, ...fields } = spec; // the spec's fields alone: a workflow is no field of an update or a decorator's spec
    const resolved = resolveScheduleSpec(fields, workflow);
    if (!(await this.schedules.create(resolved, 'api', this.clock.shiftMs))) {
      throw new InvalidArgumentError(`Schedule "${resolved.name}" exists already; change it with update() or pick another name.`);
    }
    this.sweeper.soon();
    return this.get(resolved.name);
  }

  /**
   * Changes a schedule's spec: the fields `patch` gives (one given as undefined keeps its value); the
   * paused state stays as an operator left it (pause() and resume() change it). A decorator's schedule
   * is refused: it is changed in its decorator.
   */
  async update(name: string, patch: Partial<Omit<ScheduleSpec, 'name'>>): Promise<ScheduleView> {
    if (!patch || typeof patch !== 'object' || Array.isArray(patch))
      throw new InvalidArgumentError(`update("${name}") needs a patch object of the fields to change; got ${JSON.stringify(patch)}.`);
    if (patch.paused !== undefined)
      throw new InvalidArgumentError(`update("${name}") does not pause or resume a schedule: call pause() or resume().`);
    const given = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
    const change = (row: StoredSchedule) => {
      // Every boot of an instance declaring it would put the decorator's spec back, without a word.
      if (row.source === 'decorator')
        throw new InvalidArgumentError(
          `Schedule "${name}" is declared in @Workflow("${row.workflow}")'s schedules, which every boot applies again: change it there (pause() and resume() stay an operator's).`,
        );
      return resolveScheduleSpec({ ...specOf(row), ...given, name }, row.workflow);
    };
    // workflowMissing is flagMissing's alone
    if (typeof name !== 'string' || !(await this.schedules.update(name, change, this.clock.shiftMs)))
      throw new ScheduleNotFoundError(String(name));
    this.sweeper.soon();
    return this.get(name);
  }

  /**
   * Deletes the schedule and its skipped slots; the runs it started stay. A schedule this instance's
   * decorators declare is refused: the next boot would make it again, due from then on.
   */
  async delete(name: string): Promise<void> {
    const declaring = this.registry.all().find((workflow) => workflow.schedules.some((schedule) => schedule.name === name));
    if (declaring)
      throw new InvalidArgumentError(
        `Schedule "${name}" is declared in @Workflow("${declaring.name}")'s schedules, and the next boot would make it again: take it out of the decorator first, or pause() it.`,
      );
    if (!(await this.schedules.delete(name))) throw new ScheduleNotFoundError(name);
  }

  /** Its slots start no run (each is recorded as skipped, 'paused') until resume; kept across restarts and deploys. */
  async pause(name: string, opts: ActorOptions = {}): Promise<void> {
    checkCallOptions(opts, CALL_OPTIONS.operator, `pause("${name}")`);
    if (!(await this.schedules.setPaused(name, true, actorOf(opts)))) throw new ScheduleNotFoundError(name);
  }

  async resume(name: string, opts: ActorOptions = {}): Promise<void> {
    checkCallOptions(opts, CALL_OPTIONS.operator, `resume("${name}")`);
    if (!(await this.schedules.setPaused(name, false, actorOf(opts)))) throw new ScheduleNotFoundError(name);
  }

  /**
   * One run now, outside the slots (id `schedule:<name>:trigger:<uuid>`, scheduledAt now), under the
   * overlap policy (the schedule's, or `overlap`) against its last run when that is unfinished: 'allow'
   * starts beside it, 'cancelOther' cancels it first, 'skip' and 'bufferOne' refuse (ScheduleOverlapError,
   * nothing started). With `expectLastRun`, an unfinished last run other than that one is refused alike
   * (the policy is meant for the run the caller saw). The run becomes the schedule's last run, so the
   * overlap policy of the next slot sees it.
   */
  async trigger(name: string, opts: TriggerOptions = {}): Promise<RunHandle<unknown>> {
    checkCallOptions(opts, CALL_OPTIONS.trigger, `trigger("${name}")`);
    const { overlap, expectLastRun } = opts;
    if (overlap !== undefined && !SCHEDULE_OVERLAPS.includes(overlap))
      throw new InvalidArgumentError(
        `trigger("${name}"): overlap must be one of ${SCHEDULE_OVERLAPS.join(', ')}; got ${JSON.stringify(overlap)}.`,
      );
    if (expectLastRun !== undefined && (typeof expectLastRun !== 'string' || expectLastRun.length === 0))
      throw new InvalidArgumentError(
        `trigger("${name}"): expectLastRun must be a run id (a non-empty string); got ${JSON.stringify(expectLastRun)}.`,
      );
    const id = `${scheduleRunPrefix(name)}trigger:${generatedRunId()}`;
    const fired = await this.schedules.fireNow(
      name,
      this.clock.shiftMs,
      (row, now) => {
        this.registry.resolve(row.workflow); // WorkflowNotFoundError: a trigger needs its workflow registered here
        const run = { id, actor: actorOf(opts), traceContext: this.telemetry.tracing.captureContext() };
        return triggered(row, now, run, overlap, expectLastRun);
      },
      (workflow) => scheduledWorkflow(this.registry, workflow),
    );
    if (!fired) throw new ScheduleNotFoundError(name);
    this.telemetry.started(fired.started);
    this.telemetry.ended('cancelled', fired.ended);
    this.worker.revoke(fired.cancelled); // as WorkflowClient.cancel: an execution here stops now, not at its next write or renewal
    this.worker.nudge();
    return new DurableRunHandle(id, true, this.runs, this.bus, (runId) => this.worker.isExecuting(runId));
  }

  /**
   * Starts one run for each slot from `from` to `to` (both included), at most 10,000 slots per call.
   * Slots are the schedule's own (ids `schedule:<name>:<slot>`): a slot that has a run already is
   * counted as skipped, so a backfill can be repeated safely. The overlap policy does not apply: the
   * runs are past slots asked for explicitly, and start side by side. A range reaching a slot still to
   * come is refused (InvalidArgumentError): that slot is the schedule's to fire. The schedule's workflow
   * must be registered here (WorkflowNotFoundError otherwise): its runs take their queue and timeout from it.
   */
  async backfill(name: string, from: Date, to: Date, opts: ActorOptions = {}): Promise<{ started: number; skipped: number }> {
    checkCallOptions(opts, CALL_OPTIONS.operator, `backfill("${name}")`);
    const { row, slots } = await this.backfillSlots(name, from, to);
    let started = 0;
    const traceContext = this.telemetry.tracing.captureContext();
    for (let i = 0; i < slots.length; i += 1_000) {
      const chunk = slots.slice(i, i + 1_000).map((slot) => ({
        id: slotRunId(name, slot),
        input: slotRunInput(name, row.input, slot),
        delayMs: 0,
        traceContext,
      }));
      started += (await this.schedules.insertRuns(name, row.workflow, scheduledWorkflow(this.registry, row.workflow), chunk, actorOf(opts)))
        .length;
    }
    if (started) this.worker.nudge();
    this.telemetry.started(Array.from({ length: started }, () => row.workflow));
    const result = { started, skipped: slots.length - started };
    await this.schedules.audit(name, 'schedule-backfilled', actorOf(opts), { from, to, ...result });
    return result;
  }

  /** The slots a backfill of this range would cover, without starting anything (the dashboard's preview). */
  async backfillPreview(
    name: string,
    from: Date,
    to: Date,
  ): Promise<{ started: number; skipped: number; slots: number; first?: Date; last?: Date }> {
    const { slots } = await this.backfillSlots(name, from, to);
    const skipped = await this.schedules.countExisting(slots.map((slot) => slotRunId(name, slot)));
    return { started: slots.length - skipped, skipped, slots: slots.length, first: slots[0], last: slots[slots.length - 1] };
  }

  private async backfillSlots(name: string, from: Date, to: Date): Promise<{ row: StoredSchedule; slots: Date[] }> {
    if (!(from instanceof Date) || !(to instanceof Date) || Number.isNaN(from.getTime()) || Number.isNaN(to.getTime())) {
      throw new InvalidArgumentError(`backfill of schedule "${name}" needs two valid dates, from and to.`);
    }
    // Both are included: from = to backfills the one slot at that instant.
    if (from.getTime() > to.getTime()) {
      throw new InvalidArgumentError(
        `backfill of schedule "${name}": from (${from.toISOString()}) must not be after to (${to.toISOString()}).`,
      );
    }
    const row = await this.stored(name);
    this.registry.resolve(row.workflow); // WorkflowNotFoundError: its runs take their queue and timeout from the workflow registered here
    const slots = slotsBetween(cronOf(row.cron, row.timezone), new Date(from.getTime() - 1), to, MAX_BACKFILL_SLOTS + 1);
    if (slots.length > MAX_BACKFILL_SLOTS) {
      throw new InvalidArgumentError(
        `backfill of schedule "${name}" from ${from.toISOString()} to ${to.toISOString()} covers more than ${MAX_BACKFILL_SLOTS} slots; split the range into smaller ones.`,
      );
    }
    // A slot still to come is the schedule's to fire: its run started now would take its id, and the slot would start nothing.
    const now = this.scheduleNow;
    const ahead = slots.find((slot) => slot.getTime() > now);
    if (ahead) {
      throw new InvalidArgumentError(
        `backfill of schedule "${name}": to (${to.toISOString()}) reaches slot ${ahead.toISOString()}, which is still to come (the database's now is ${new Date(now).toISOString()}); backfill past slots only.`,
      );
    }
    return { row, slots };
  }

  /** ScheduleNotFoundError when there is none. */
  async get(name: string): Promise<ScheduleView> {
    return viewOf(await this.stored(name), this.scheduleNow);
  }

  async list(): Promise<ScheduleView[]> {
    return (await this.schedules.list()).map((row) => viewOf(row, this.scheduleNow));
  }

  /** The schedules' now, ms: the database's, shifted under the testing clock. */
  private get scheduleNow(): number {
    return this.clock.now() + this.clock.shiftMs;
  }

  /** The schedule's most recent skipped slots, newest first. */
  async skipped(name: string, limit = 50): Promise<ScheduleSkip[]> {
    await this.stored(name);
    return this.schedules.skips(name, limit);
  }

  private async stored(name: string): Promise<StoredSchedule> {
    const row = typeof name === 'string' ? await this.schedules.get(name) : undefined;
    if (!row) throw new ScheduleNotFoundError(String(name));
    return row;
  }
}

/** The spec a stored schedule was made from (to apply a patch to). */
export function specOf(row: StoredSchedule): ScheduleSpec {
  return {
    name: row.name,
    cron: row.cron,
    timezone: row.timezone,
    overlap: row.overlap,
    catchupWindow: Number(row.catchup_window_ms),
    catchup: row.catchup,
    input: deserialize(row.input),
    jitter: Number(row.jitter_ms),
  };
}

/**
 * The next 5 slots; none for a stored cron the cron library refuses (its pass logs it): one such row must
 * not fail every read. A held schedule's last slot stays where the hold began: its next ones count from now.
 */
function nextFireTimes(row: StoredSchedule, now: number): Date[] {
  const after = row.workflow_missing ? new Date(Math.max(row.last_slot.getTime(), now)) : row.last_slot;
  try {
    return cronOf(row.cron, row.timezone).nextRuns(5, after);
  } catch {
    return [];
  }
}

function viewOf(row: StoredSchedule, now: number): ScheduleView {
  const lastInput = row.last_run_input ? deserialize<{ scheduledAt?: Date }>(row.last_run_input) : undefined;
  return {
    name: row.name,
    workflow: row.workflow,
    cron: row.cron,
    timezone: row.timezone,
    overlap: row.overlap,
    catchupWindow: Number(row.catchup_window_ms),
    catchup: row.catchup,
    input: deserialize(row.input),
    jitter: Number(row.jitter_ms),
    // Held reads as paused (docs/guides/schedules.md: kept, paused and flagged); workflowMissing tells it from an operator's pause.
    paused: row.paused || row.workflow_missing,
    source: row.source,
    workflowMissing: row.workflow_missing,
    operatorPaused: row.paused,
    nextFireTimes: nextFireTimes(row, now),
    ...(row.last_run_id &&
      row.last_run_status && {
        lastRun: { runId: row.last_run_id, status: row.last_run_status, scheduledAt: lastInput?.scheduledAt as Date },
      }),
    skippedCount: row.skipped,
  };
}
