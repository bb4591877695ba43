import { DeadlineExceededError } from '../errors';
import type { Execution } from './execution';
import { rebuildError } from './errors';
import { DEADLINE_PASSED_KEY } from '../durable.constants';
import type { ErrorInfo } from '../errors/error-info';

/** Where the passing of the deadline was thrown: the call's key, and the other waits awaited with it that threw it too. */
export interface PassingInfo {
  at: string;
  also?: string[];
}

/** The longest a Node timer can be set for (a longer one fires at once); a grace end further off is left to the next execution. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A run's deadline, as one execution enforces it. Before the deadline every wait wakes by it. Past
 * it, the first wait that cannot complete throws DeadlineExceededError, journaled with that call's
 * key (an error outcome, so an operator's retry clears it) so that a re-execution throws at the same
 * call whatever arrived since; from then on waits wake by the end of the grace, and at that end the
 * run is failed whatever it is doing. Steps are never interrupted: the grace is for cleanup steps.
 */
export class RunDeadline {
  /** A deadline earlier than the loaded one, read by a lease renewal (adopt). */
  private shortened?: number;
  /** The journaled calls this execution has thrown the passing at (beforeWait, replayAt). */
  private readonly replayed = new Set<string>();

  constructor(private readonly execution: Execution) {}

  /** The deadline (ms since the epoch); undefined: the run has none. */
  get at(): number | undefined {
    return this.shortened ?? this.execution.journal.deadline;
  }

  /**
   * The stored deadline a lease renewal read: adopted when it is earlier than the one enforced (an
   * operator set or shortened it while the run executes, never parking), so the next wait throws by it
   * and the grace ends by it. A later or cleared one is left to the call that finds it moved
   * (passDeadline, the grace's end), which executes the run again under it. True when adopted.
   */
  adopt(stored: Date | null): boolean {
    const at = this.at;
    if (stored === null || (at !== undefined && stored.getTime() >= at)) return false;
    this.shortened = stored.getTime();
    return true;
  }

  /** The end of the grace: the run is failed then. */
  get graceEnd(): number | undefined {
    return this.at === undefined ? undefined : this.at + this.execution.workflow.deadlineGraceMs;
  }

  /** The instant every wait must wake by: the deadline, or the grace's end once it has passed. */
  get limit(): number | undefined {
    return this.execution.journal.steps.has(DEADLINE_PASSED_KEY) ? this.graceEnd : this.at;
  }

  /** Whether the deadline has passed (a failed attempt is then not retried). */
  get passed(): boolean {
    return this.at !== undefined && this.at <= this.execution.deps.clock.now();
  }

  /** Milliseconds until the grace ends, for the execution's timer; undefined without one a timer can hold. */
  msToGraceEnd(): number | undefined {
    const end = this.graceEnd;
    if (end === undefined) return undefined;
    const ms = end - this.execution.deps.clock.now();
    return ms <= MAX_TIMER_MS ? Math.max(0, ms) : undefined;
  }

  /**
   * Whether the deadline, not thrown yet, passed before another deadline of instant `at` (a select's
   * own, when both passed while no worker ran): the earlier decides, so the wait throws instead (beforeWait).
   */
  precedes(at: number, now: number): boolean {
    const deadline = this.at;
    return deadline !== undefined && deadline < at && deadline <= now && !this.execution.journal.steps.has(DEADLINE_PASSED_KEY);
  }

  /**
   * At a call the deadline's passing was journaled at, a re-execution throws it again, once for each call
   * journaled (`at`, and `also`: the waits awaited together that threw it too). `sameCall` says whether a
   * journaled key is this call's: by default the same key.
   */
  replayAt(key: string, sameCall: (at: string) => boolean = (at) => at === key): void {
    const passing = this.execution.journal.steps.get(DEADLINE_PASSED_KEY)?.error as (PassingInfo & ErrorInfo) | null | undefined;
    if (!passing?.at) return;
    const at = [passing.at, ...(passing.also ?? [])].find((call) => !this.replayed.has(call) && sameCall(call));
    if (at === undefined) return;
    this.replayed.add(at);
    throw rebuildError(passing as never);
  }

  /**
   * Before a wait that cannot complete now (its key given): past the deadline, the first such wait throws
   * DeadlineExceededError, journaled, and so does every other that gets here before that passing is
   * journaled (waits of one `Promise.all`, journaled in the passing's `also`); a wait that gets here after
   * it waits by the grace's end. Past the grace, the run is failed. Returns the instant the wait must wake by, if any.
   */
  async beforeWait(key: string): Promise<number | undefined> {
    const { execution } = this;
    const at = this.at;
    if (at === undefined) return undefined;
    const now = execution.deps.clock.now();
    if (now >= this.graceEnd!) return execution.expire();
    if (execution.journal.steps.has(DEADLINE_PASSED_KEY) || now < at) return this.limit;
    const error = new DeadlineExceededError(execution.runId, new Date(at));
    await execution.passDeadline(at, {
      outcome: 'error',
      result: null,
      error: { name: error.name, message: error.message, runId: execution.runId, deadline: new Date(at).toISOString(), at: key } as never,
    });
    this.replayed.add(key); // thrown here already: a later call of this execution that replayAt matches to it goes on
    throw error;
  }

  /** `ms` shortened to end at the limit, for a wait in-process. */
  capMs(ms: number): number {
    const limit = this.limit;
    return limit === undefined ? ms : Math.max(0, Math.min(ms, limit - this.execution.deps.clock.now()));
  }

  /** A wake instant brought forward to the limit, for a park. */
  capWake(wakeAt: Date | null): Date | null {
    const limit = this.limit;
    if (limit === undefined) return wakeAt;
    return wakeAt === null || limit < wakeAt.getTime() ? new Date(limit) : wakeAt;
  }
}
