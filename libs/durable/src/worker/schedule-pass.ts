import { Injectable, Logger } from '@nestjs/common';
import { ScheduleOverlapError } from '../errors';
import type { ScheduleOverlap, ScheduleSkipReason } from '../interfaces';
import { DurableTelemetry } from '../observability/durable-telemetry';
import type { DueSchedule, ScheduleFiring, ScheduledRun, TriggeredSchedule } from '../persistence/schedule.repository';
import { ScheduleRepository } from '../persistence/schedule.repository';
import { DbClock } from '../runtime/db-clock';
import { scheduledWorkflow, WorkflowRegistry } from '../runtime/workflow.registry';
import { jitterOf, slotRunId, slotRunInput } from '../schema/schedule-spec';
import { SlotCalendar } from '../schema/slot-calendar';
import { DurableWorker } from './durable.worker';

/** The most slots one schedule moves through in one pass; a longer backlog takes more passes. */
const SLOTS_PER_PASS = 1_000;
const UNFINISHED = new Set(['pending', 'running', 'waiting']);
/** While a slot is buffered, how often its schedule looks whether the run it waits for has ended. */
export const BUFFERED_LOOK_MS = 1_000;
/** A schedule whose slots cannot be decided (its stored input or cron refused) is looked at again this much later. */
export const UNDECIDABLE_RETRY_MS = 60_000;
/**
 * Due schedules one pass transaction fires: its writes are four statements whatever the count, so a
 * minute boundary that makes 10,000 schedules due takes four transactions (fewer round trips to wait on
 * beside the runs they start: measured, 2,500 fired 10,000 slots about 20% sooner than 1,000).
 */
export const SCHEDULES_PER_TRANSACTION = 2_500;
/**
 * The slots (runs started and slots skipped) one pass transaction decides, at most about: past it, the batch's
 * other schedules are left due for the next transaction. A long outage gives every schedule a backlog of
 * SLOTS_PER_PASS, and a whole batch of those (2.5 million skipped slots) overran the one jsonb value the
 * skips travel in (256 MiB), failing the pass, and every pass after it, with the same schedules.
 */
export const SLOTS_PER_TRANSACTION = 50_000;
/** Pass transactions side by side when a crowd is due: enough to keep Postgres busy while one waits on its client. */
export const PARALLEL_TRANSACTIONS = 4;

/** What a pass did, and when (database time) the next schedule is due: the sweeper aims its next pass there. */
export interface SchedulePassResult {
  started: number;
  /** Milliseconds until the earliest next_fire_at of this instance's workflows (0 or less: due now); null with none. */
  nextDueInMs: number | null;
}

/**
 * Fires the schedules that are due, from the sweeper: no timer per schedule. Each due schedule's
 * slots since its last slot are computed (croner, in its timezone) against the database's now, then
 * each slot starts its run, or is recorded as skipped with its reason; the schedule advances in the
 * same transaction. An instance fires only the schedules of the workflows it registers (a mixed fleet
 * mid-rollout): its runs take their workflow's queue and timeout from the registration.
 */
@Injectable()
export class SchedulePass {
  private readonly logger = new Logger('DurableSchedules');

  constructor(
    private readonly schedules: ScheduleRepository,
    private readonly clock: DbClock,
    private readonly registry: WorkflowRegistry,
    private readonly telemetry: DurableTelemetry,
    private readonly worker: DurableWorker,
  ) {}

  /** When (process clock, ms) `watchWorkflows` next decides the schedules' workflowMissing; 0 at once. */
  private workflowsDueAt = 0;

  /**
   * At most once every `leaseMs`: flags the schedules whose workflow no live instance executes any more,
   * and clears those that one executes again (a boot alone decided it, so a rollout removing a workflow
   * while instances that had it were still alive left its schedule inserting runs that nobody claimed).
   */
  async watchWorkflows(leaseMs: number): Promise<void> {
    const now = performance.now();
    if (now < this.workflowsDueAt) return;
    this.workflowsDueAt = now + leaseMs;
    await this.schedules.flagMissing(this.registry.names(), leaseMs, this.clock.shiftMs);
  }

  /** What a schedule's runs take from their workflow: its queue and its timeout. */
  private readonly settingsOf = (workflow: string) => scheduledWorkflow(this.registry, workflow);

  /**
   * Fires everything due. With nothing due it is one indexed read, no transaction. That read also
   * counts the schedules due (up to what the lanes take in one round): a crowd at one boundary is fired
   * by up to PARALLEL_TRANSACTIONS transactions side by side from the start (SKIP LOCKED keeps their
   * batches apart), each going on while its batches come back full. Afterwards it reads when the next
   * schedule is due.
   */
  async run(): Promise<SchedulePassResult> {
    const { shiftMs } = this.clock;
    const upTo = PARALLEL_TRANSACTIONS * SCHEDULES_PER_TRANSACTION;
    const workflows = this.registry.names();
    const before = await this.schedules.nextDue(shiftMs, upTo, workflows);
    if (before.inMs === null || before.inMs > 0) return { started: 0, nextDueInMs: before.inMs };
    let started = 0;
    /** Fires one batch; true when it was full, of schedules or of slots (more may be due). */
    const batch = async (): Promise<boolean> => {
      let seen = 0;
      let slots = 0;
      let calendar: SlotCalendar | undefined;
      const fired = await this.schedules.fire(
        SCHEDULES_PER_TRANSACTION,
        shiftMs,
        workflows,
        (row, now) => {
          seen++;
          // Left due (at the pass's now, behind the schedules still waiting since earlier) for the next transaction.
          if (slots >= SLOTS_PER_TRANSACTION) return held(row, now);
          if (calendar?.now.getTime() !== now.getTime()) calendar = new SlotCalendar(now, SLOTS_PER_PASS);
          try {
            const firing = decide(row, calendar);
            slots += firing.runs.length + firing.skips.length;
            return firing;
          } catch (error) {
            // One schedule's failure must not roll back the batch's others and block them on every pass.
            this.logger.error(`Schedule "${row.name}" cannot fire; it is looked at again in a minute: ${(error as Error).message}`);
            return held(row, new Date(now.getTime() + UNDECIDABLE_RETRY_MS));
          }
        },
        this.settingsOf,
      );
      started += fired.started.length;
      this.telemetry.started(fired.started);
      this.telemetry.ended('cancelled', fired.ended);
      this.worker.revoke(fired.cancelled); // as a trigger's cancel: an execution here stops now, not at its next write or renewal
      // A jittered run starts at its instant (within the wake timer's minute), as a client's delayed start does, not at the next sweep after it.
      for (const at of fired.startsAt) this.worker.wakeAt(at);
      return seen === SCHEDULES_PER_TRANSACTION || slots >= SLOTS_PER_TRANSACTION;
    };
    const lanes = Math.max(1, Math.min(PARALLEL_TRANSACTIONS, Math.ceil(before.due / SCHEDULES_PER_TRANSACTION)));
    const ended = await Promise.allSettled(
      Array.from({ length: lanes }, async () => {
        while (await batch());
      }),
    );
    const failed = ended.find((lane): lane is PromiseRejectedResult => lane.status === 'rejected');
    if (failed) throw failed.reason;
    return { started, nextDueInMs: (await this.schedules.nextDue(shiftMs, 0, workflows)).inMs };
  }
}

/** A schedule left as it is (no slot started or skipped), due again at `nextFireAt`. */
const held = (row: DueSchedule, nextFireAt: Date | null): ScheduleFiring => ({
  runs: [],
  skips: [],
  lastSlot: row.last_slot,
  nextFireAt,
  bufferedSlot: row.buffered_slot,
  lastRunId: row.last_run_id,
});

/** What one due schedule does at the calendar's now: the pure rule of catch-up, pause and overlap. */
export function decide(row: DueSchedule, calendar: SlotCalendar): ScheduleFiring {
  // Its workflow executed by no instance: held as through downtime, due again when the flag clears (flagMissing
  // makes it due then), so its catch-up policy decides the slots it missed; an operator's pause still skips them.
  if (row.workflow_missing && !row.paused) return held(row, null);
  const { now } = calendar;
  const { slots, next, more } = calendar.after(row.cron, row.timezone, row.last_slot);
  const skips: ScheduleFiring['skips'] = [];
  const runs: ScheduledRun[] = [];
  /** The slots whose runs this pass starts, in the order of `runs`. */
  const started: Date[] = [];
  const skip = (slot: Date, reason: ScheduleSkipReason) => skips.push({ slot, reason });
  let lastRunId = row.last_run_id;
  let unfinished = row.last_run_status !== null && UNFINISHED.has(row.last_run_status);
  let buffered = row.buffered_slot;
  let cancel: string | undefined;
  // A jitter is cut to before the next slot still to come, as Temporal cuts it: a run still waiting for its
  // start there would count as unfinished, and that slot be skipped (or the run cancelled) unbegun. The delay
  // counts from this pass, so a late pass leaves less of the gap (none, past the next slot: `next` is now
  // when the backlog was capped); the slot keeps its place in what is left (jitterOf).
  const jitterMs = next ? Math.min(Number(row.jitter_ms), Math.max(0, next.getTime() - now.getTime() - 1)) : Number(row.jitter_ms);
  const start = (slot: Date) => {
    const id = slotRunId(row.name, slot);
    runs.push({ id, input: slotRunInput(row.name, row.input, slot), delayMs: jitterOf(row.name, slot, jitterMs) });
    started.push(slot);
    lastRunId = id;
    unfinished = true;
  };

  if (row.paused) {
    if (buffered) skip(buffered, 'paused');
    for (const slot of slots) skip(slot, 'paused');
    buffered = null;
  } else {
    // A buffered slot starts once the run it waited for has ended.
    if (buffered && !unfinished) {
      start(buffered);
      buffered = null;
    }
    const windowStart = now.getTime() - Number(row.catchup_window_ms);
    const inWindow = slots.filter((slot) => slot.getTime() >= windowStart);
    // 'latest' over a backlog longer than a pass: the newest slot is in a later pass, so none of this one's runs.
    const chosen = new Set(row.catchup === 'all' ? inWindow : more ? [] : inWindow.slice(-1));
    for (const slot of slots) {
      if (!chosen.has(slot)) skip(slot, 'missed');
      else if (!unfinished || row.overlap === 'allow') start(slot);
      else if (row.overlap === 'cancelOther') {
        // The unfinished run is the stored one, or one this pass started (catch-up 'all'): that one is not started after all.
        const previous = started.pop();
        if (previous) {
          runs.pop();
          skip(previous, 'overlap');
        } else cancel = lastRunId ?? undefined;
        start(slot);
      } else if (row.overlap === 'bufferOne' && !buffered) buffered = slot;
      else skip(slot, 'overlap');
    }
  }
  const lastSlot = slots.at(-1) ?? row.last_slot;
  // While a slot is buffered, the schedule looks every BUFFERED_LOOK_MS whether the run it waits for has ended
  // (due at once, it kept every instance's sweeper firing it every 100 ms for as long as the run lasted).
  const lookAgain = new Date(now.getTime() + BUFFERED_LOOK_MS);
  const nextFireAt = buffered && (!next || lookAgain < next) ? lookAgain : next;
  return { runs, skips, cancel, lastSlot, nextFireAt, bufferedSlot: buffered, lastRunId };
}

/**
 * What a trigger does at `now`: one run outside the slots (`id`, scheduledAt now), under the overlap
 * policy given (the schedule's by default) against the last run when it is unfinished: 'allow' starts
 * beside it, 'cancelOther' cancels it first, 'skip' and 'bufferOne' refuse (ScheduleOverlapError, nothing
 * written: a trigger is asked for now, not buffered). An unfinished last run other than `expectLastRun`
 * (when given) is refused alike, whatever the policy. The run becomes the last run; the slots are left as they are.
 */
export function triggered(
  row: TriggeredSchedule,
  now: Date,
  run: { id: string; actor: string; traceContext: string | null },
  overlap: ScheduleOverlap = row.overlap,
  expectLastRun?: string,
): ScheduleFiring {
  const { id, actor, traceContext } = run;
  const unfinished = row.last_run_id !== null && row.last_run_status !== null && UNFINISHED.has(row.last_run_status);
  if (unfinished && expectLastRun !== undefined && row.last_run_id !== expectLastRun)
    throw new ScheduleOverlapError(row.name, row.last_run_id!, row.last_run_status!, overlap, expectLastRun);
  if (unfinished && (overlap === 'skip' || overlap === 'bufferOne'))
    throw new ScheduleOverlapError(row.name, row.last_run_id!, row.last_run_status!, overlap);
  return {
    runs: [{ id, input: slotRunInput(row.name, row.input, now), delayMs: 0, traceContext }],
    skips: [],
    cancel: unfinished && overlap === 'cancelOther' ? row.last_run_id! : undefined,
    actor,
    lastSlot: row.last_slot,
    nextFireAt: row.next_fire_at,
    bufferedSlot: row.buffered_slot,
    lastRunId: id,
  };
}
