import { NonRetryableError, StepResultMismatchError, InvalidPayloadError } from '../errors';
import type { StepOptions } from '../interfaces';
import type { RegisteredWorkflow, WorkflowRegistry } from './workflow.registry';
import type { JournalRepository, StepCheckpoint, StoredStep } from '../persistence/journal.repository';
import type { ClaimedRun, WaitSpec } from '../persistence/run.repository';
import { validatePayload } from '../schema/payload-validator';
import type { WakeBus, WakeWatch } from './wake-bus';
import type { DbClock } from './db-clock';
import { errorInfo, isNonRetryable, rebuildError, tagStep } from './errors';
import type { Journal } from './journal';
import type { Lease } from './lease';
import { backoffMs, NO_RETRY, resolveRetryPolicy, ResolvedRetryPolicy } from './retry-policy';
import { keyPart, stepKey } from './checkpoint-keys';
import { runScope } from './run-scope';
import { deserialize, serialize } from '../schema/serializer';
import type { ChildStarter } from './child-starter';
import type { DurableTelemetry } from '../observability/durable-telemetry';
import { MAX_TIMER_MS, type PassingInfo, RunDeadline } from './run-deadline';
import { DEADLINE_PASSED_KEY } from '../durable.constants';

/**
 * How one execution of `run()` ended; `expired`: the grace after the run's deadline ended first.
 * `checkpoint`: the last step's (or a select's winner), left pending to be written with the end (see Execution.commitPending).
 */
export type ExecutionOutcome =
  | { type: 'completed'; output: unknown; checkpoint?: StepCheckpoint }
  | { type: 'failed'; error: unknown }
  | { type: 'park'; wait: WaitSpec }
  | { type: 'lost' }
  | { type: 'expired' }
  /** What the execution loaded is stale (an operator moved the deadline): execute again with a fresh journal. */
  | { type: 'moved' };

export interface ExecutionDeps {
  journal: JournalRepository;
  bus: WakeBus;
  clock: DbClock;
  registry: WorkflowRegistry;
  children: ChildStarter;
  inlineWaitMs: number;
  telemetry: DurableTelemetry;
}

/** A step's options with its retry policy settled (done once per @Step method, at boot). */
export interface ResolvedStepOptions extends StepOptions {
  resolvedRetry?: ResolvedRetryPolicy;
}

/**
 * One execution of a run's `run()`: its journal, its checkpoint keys, and its suspension. A primitive
 * that cannot complete calls `suspend`, which settles `outcome` and hands the primitive a promise
 * that never settles: no catch or finally of the workflow's code runs for a pause.
 */
export class Execution {
  private readonly outcome: Promise<ExecutionOutcome>;
  private settle!: (outcome: ExecutionOutcome) => void;
  private active = true;
  private readonly keyCounts = new Map<string, number>();
  private readonly inflight = new Set<Promise<unknown>>();
  /** The keyed steps executing now, by checkpoint key. */
  private readonly running = new Map<string, Promise<unknown>>();
  /** The last step's (or a select's winner) checkpoint, not written yet (see commitPending), and its write once sent. */
  private pending?: StepCheckpoint;
  private flushing?: Promise<boolean>;
  /** The run's wakes on the in-process bus while it executes (see wakeCursor). */
  private wakes?: WakeWatch;
  readonly deadline = new RunDeadline(this);
  /** Ends the execution as `expired` at the grace's end (armGrace). */
  private graceTimer?: NodeJS.Timeout;
  /** When this execution began, its journal loaded: a renewal sent before may have read a deadline changed since. */
  private readonly begunAt = performance.now();

  constructor(
    readonly run: ClaimedRun,
    readonly workflow: RegisteredWorkflow,
    readonly journal: Journal,
    readonly deps: ExecutionDeps,
    readonly lease: Lease,
  ) {
    this.outcome = new Promise((resolve) => (this.settle = resolve));
  }

  get runId(): string {
    return this.run.id;
  }

  get isActive(): boolean {
    return this.active;
  }

  /**
   * Runs `run(input, ctx)` to its outcome (its result, or a suspension or the lease's loss if one came
   * first); steps still running then finish and checkpoint before the run parks, unless the lease is
   * lost. Listens on the lease only meanwhile: a lease held through many executions (wakes in-process,
   * parks that lost a race) keeps none of the ended ones. The end of the grace after the run's
   * deadline ends it as `expired` whatever it is doing, without waiting for its steps. A completed
   * run hands its pending checkpoint to the end; any other outcome writes it first.
   */
  async execute(input: unknown, ctx: unknown): Promise<ExecutionOutcome> {
    const wakes = (this.wakes = this.deps.bus.watch(this.runId));
    let signalLost!: () => void;
    const lost = new Promise<void>((resolve) => (signalLost = resolve));
    const unsubscribe = this.lease.onLost(() => {
      signalLost();
      this.end({ type: 'lost' });
      // A wait in-process (inlineWaitMs) ends now, not at its timer, which would keep a closed application's process alive.
      this.deps.bus.wake(this.runId);
    });
    const unwatchDeadline = this.lease.onDeadline((stored, sentAt) => {
      if (sentAt.mono < this.begunAt || !this.deadline.adopt(stored)) return;
      this.armGrace();
      // A wait in-process on the run's wakes (a signal's, a child's, a select's) caps itself again now; a sleep's
      // in-process part (at most inlineWaitMs) is waited out first.
      this.deps.bus.wake(this.runId);
    });
    const graceMs = this.armGrace();
    try {
      if (graceMs !== 0) {
        runScope
          .run({ execution: this, inStep: false }, () => Promise.resolve().then(() => this.workflow.instance.run(input, ctx as never)))
          .then(
            (output) => this.end({ type: 'completed', output }),
            (error) => this.end({ type: 'failed', error }),
          );
      }
      const outcome = await this.outcome;
      if (outcome.type !== 'expired')
        while (this.inflight.size && !this.lease.lost) await Promise.race([Promise.allSettled([...this.inflight]), lost]);
      if (outcome.type === 'lost' || this.lease.lost || !(this.pending || this.flushing)) return outcome;
      if (outcome.type === 'completed' && !this.flushing) return { ...outcome, checkpoint: this.takePending() };
      let written: boolean;
      try {
        written = await this.flushPending();
      } catch (error) {
        // A write at the end of a turn failed, and gave the checkpoint back: the end carries it.
        if (outcome.type === 'completed' && this.pending) return { ...outcome, checkpoint: this.takePending() };
        // As when a step's own write fails: the run's code would have had it thrown at that step.
        return outcome.type === 'expired' ? outcome : { type: 'failed', error };
      }
      if (written) return outcome;
      this.lease.markLost();
      return { type: 'lost' };
    } finally {
      clearTimeout(this.graceTimer);
      unwatchDeadline();
      unsubscribe();
      wakes.close();
    }
  }

  /**
   * The waits in-process of one primitive call: each resolves at the run's next wake on the bus (a
   * delivery, a child's end, the lease's loss), or after `ms`, and at once when a wake came since the
   * last one ended (since the execution's start, its journal loaded, for the first): one that came
   * while the caller read what it waits for, or executed a step, is not missed. Waits side by side
   * (the children of an `all`) each have their own and are each answered by one wake.
   */
  wakeCursor(): { next(ms: number): Promise<void> } {
    const wakes = this.wakes!;
    let since = 0;
    return {
      next: async (ms) => {
        await wakes.next(ms, since);
        since = wakes.mark(); // before the caller's read: a wake from now on is one the read may miss
      },
    };
  }

  /**
   * The checkpoint key of this call: `prefix:name` (or the name alone) the first time in this execution,
   * then with `#2`, `#3`… The name is spelled in the run's key format (keyPart).
   */
  keyFor(name: string, prefix?: string): string {
    const first = this.firstKeyFor(name, prefix);
    const count = (this.keyCounts.get(first) ?? 0) + 1;
    this.keyCounts.set(first, count);
    return count === 1 ? first : `${first}#${count}`;
  }

  /** Whether `key` is one keyFor gives for this name and prefix, at whichever count. */
  isKeyFor(key: string, name: string, prefix?: string): boolean {
    const first = this.firstKeyFor(name, prefix);
    return key === first || (key.startsWith(`${first}#`) && /^\d+$/.test(key.slice(first.length + 1)));
  }

  /** keyFor's key of the first such call. */
  private firstKeyFor(name: string, prefix?: string): string {
    return prefix === undefined ? this.keyPart(name) : `${prefix}:${this.keyPart(name)}`;
  }

  /** A name as a part of this run's checkpoint keys (see checkpoint-keys). */
  private keyPart(name: string): string {
    return keyPart(name, this.journal.keyFormat);
  }

  /** Pauses the run durably, to wake by the run's deadline at the latest; the returned promise never settles. */
  suspend(wait: WaitSpec): Promise<never> {
    this.end({ type: 'park', wait: { ...wait, wakeAt: this.deadline.capWake(wait.wakeAt) } });
    return never();
  }

  /** Sets the timer of the grace's end afresh (the deadline may have been shortened); returns its delay, if any. */
  private armGrace(): number | undefined {
    clearTimeout(this.graceTimer);
    const ms = this.deadline.msToGraceEnd();
    this.graceTimer = ms === undefined ? undefined : setTimeout(() => this.end({ type: 'expired' }), ms);
    return ms;
  }

  /**
   * Journals the passing of the deadline this execution enforces, before it is thrown at `step`'s call:
   * if an operator moved the stored deadline since, nothing is written and the run executes again
   * under the new one (the returned promise never settles then).
   */
  async passDeadline(at: number, step: StoredStep): Promise<void> {
    await this.commitPending();
    const passed = await this.deps.journal.passDeadline(this.runId, this.lease.token, at, step.error!);
    if (passed === 'lost') return this.lose();
    if (passed === 'moved') {
      this.end({ type: 'moved' });
      return never();
    }
    const journaled = this.journal.steps.get(DEADLINE_PASSED_KEY)?.error as PassingInfo | null | undefined;
    // Thrown beside another wait of this execution: the statement added this call to that passing's `also`.
    if (journaled) journaled.also = [...(journaled.also ?? []), (step.error as unknown as PassingInfo).at];
    else this.journal.steps.set(DEADLINE_PASSED_KEY, step);
  }

  /**
   * After an end that did not wait for its steps (`expired`), waits up to `ms` for the steps still in
   * flight to finish and their checkpoints to be written, unless the lease is lost: an execution after
   * this one must not run one of them again while it still runs here.
   */
  async quiesce(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (this.inflight.size && !this.lease.lost && Date.now() < until)
      await settledWithin(Promise.allSettled([...this.inflight]), until - Date.now());
    // The last step's checkpoint, left pending: one try (a failure leaves it to the next execution, which runs that step again).
    if ((this.pending || this.flushing) && !this.lease.lost)
      await settledWithin(
        this.flushPending().catch(() => undefined),
        until - Date.now(),
      );
  }

  /** The grace after the run's deadline is over: the run is failed, whatever its code does next. */
  expire(): Promise<never> {
    this.end({ type: 'expired' });
    return never();
  }

  /** A write found the lease gone (taken over, or cancelled): stop without writing anything more. */
  lose(): Promise<never> {
    this.lease.markLost();
    return never();
  }

  /**
   * The entry of a durable primitive: throws inside a step, where it cannot pause anything; else first
   * commits the checkpoint left pending (see commitPending).
   */
  async enter(primitive: string): Promise<void> {
    if (runScope.getStore()?.inStep) {
      throw new NonRetryableError(
        `ctx.${primitive}() was called inside a step of run "${this.runId}". Durable primitives pause the run and belong in run() itself; call them between steps.`,
      );
    }
    if (!(await this.commitPending())) return never(); // the run parked or ended meanwhile (a primitive beside this one)
  }

  /**
   * The one write a step's result may wait for: a step whose checkpoint no other writer can hold (its
   * key generated, no other step of this execution in flight) returns before its checkpoint is
   * written, and the run's next durable action (a step, a primitive, a park or a failure) writes it
   * first, so nothing durable follows a step whose result is not. When the run's code returns in the
   * same turn of the event loop instead, the checkpoint rides with the run's end, in its statement and
   * commit: a three-step workflow commits four times, not five. Code that goes on to wait for
   * something else (a timer, I/O) does not hold it back: it is written at the end of that turn
   * (deferCheckpoint), so the step's crash window is as long as it was when every step waited for its own.
   * Never returns when the lease is gone; answers whether the execution is still active after waiting.
   */
  async commitPending(): Promise<boolean> {
    if (!(this.pending || this.flushing)) return true; // the common case: nothing pending, no write to wait for
    if (!(await this.flushPending())) await this.lose();
    return this.active;
  }

  /**
   * Writes the pending checkpoint, once, for every caller. False when the lease is gone, or when
   * another writer's row holds the key with another outcome (which the checkpoint's conditions rule
   * out): the execution has gone on with its own, so it stops, and the next replays the stored one.
   */
  private flushPending(): Promise<boolean> {
    if (this.flushing) return this.flushing;
    const pending = this.pending;
    if (!pending) return Promise.resolve(true);
    this.pending = undefined;
    const { key, kind, step, startedAt } = pending;
    this.flushing = this.deps.journal
      .checkpoint(this.runId, this.lease.token, key, kind, step, startedAt)
      .then(
        (written) => written.status === 'written' || (written.status === 'exists' && written.step.result === step.result),
        (error: unknown) => {
          this.pending ??= pending; // the next action writes it again, and fails with it if it must
          throw error;
        },
      )
      .finally(() => (this.flushing = undefined));
    return this.flushing;
  }

  private takePending(): StepCheckpoint | undefined {
    const pending = this.pending;
    this.pending = undefined;
    return pending;
  }

  /** Leaves a checkpoint pending (see commitPending), to be written at the end of this turn if nothing took it. */
  private deferCheckpoint(checkpoint: StepCheckpoint): void {
    this.pending = checkpoint;
    this.journal.steps.set(checkpoint.key, checkpoint.step);
    setImmediate(() => {
      if (this.pending !== checkpoint || this.lease.lost) return;
      this.flushPending().then(
        (written) => written || this.lease.markLost(),
        () => undefined, // pending again: the next action writes it and answers for the error
      );
    });
  }

  /** The memoized call of a step: its stored outcome when journaled, else runs it and checkpoints it. */
  async step<T>(name: string, fn: () => T | Promise<T>, options: ResolvedStepOptions, args: readonly unknown[]): Promise<T> {
    if (!this.active) return never();
    if (options.key) {
      const key = stepKey(name, `${this.keyPart(name)}:`, options.key, args, (stored) => this.journal.steps.has(stored));
      return this.stepAt(name, key, fn, options);
    }
    return this.stepAt(name, this.keyFor(name), fn, options, true);
  }

  /**
   * A step under the checkpoint key given. Its metrics and span are labelled by `name`, never by the
   * key: keys grow with repeats, keys and messages, and every label value is a series of its own.
   * `generated`: the key is keyFor's, which no other call of this execution can have.
   */
  async stepAt<T>(name: string, key: string, fn: () => T | Promise<T>, options: ResolvedStepOptions, generated = false): Promise<T> {
    if (!this.active) return never();
    const stored = this.journal.steps.get(key);
    if (stored) return this.replay<T>(key, stored, options);
    // A keyed step called again while its first call runs (Promise.all over one item twice) waits for that call's outcome.
    const running = this.running.get(key);
    if (running)
      return running.then(
        () => this.replay<T>(key, this.journal.steps.get(key)!, options),
        (error) => this.storedOr(key, error, options),
      );
    const fresh = this.track(this.runFresh<T>(name, key, fn, options, generated));
    if (!generated) {
      this.running.set(key, fresh);
      const done = () => this.running.delete(key);
      fresh.then(done, done);
    }
    return fresh;
  }

  /** The outcome stored under `key` once the call that failed with `error` ended: a failure it journaled, else `error` itself. */
  private storedOr<T>(key: string, error: unknown, options: ResolvedStepOptions): Promise<T> {
    const stored = this.journal.steps.get(key);
    if (stored) return this.replay<T>(key, stored, options);
    throw error;
  }

  /** Writes a checkpoint and records it in the journal; returns the winner's row when another writer was first. */
  async checkpoint(key: string, kind: string, step: StoredStep, startedAt: Date | null): Promise<StoredStep> {
    await this.commitPending();
    const written = await this.deps.journal.checkpoint(this.runId, this.lease.token, key, kind, step, startedAt);
    if (written.status === 'lost') return this.lose();
    const kept = written.status === 'exists' ? written.step : step;
    this.journal.steps.set(key, kept);
    return kept;
  }

  /**
   * The checkpoint of a decision the run made from what is durable already (a select's winner): left
   * pending as a step's is (see commitPending), so it rides with the run's next write, when no step
   * of this execution is in flight to take the pending place. Only a crash before that write can
   * change it: the next execution decides again from the same stored facts, and nothing durable
   * followed the first decision.
   */
  async decide(key: string, kind: string, step: StoredStep): Promise<StoredStep> {
    await this.commitPending();
    if (this.inflight.size || this.pending || this.flushing) return this.checkpoint(key, kind, step, null);
    this.deferCheckpoint({ key, kind, step, startedAt: null });
    return step;
  }

  /** What a stored outcome says: the value, or the stored failure thrown again. */
  async replay<T>(key: string, stored: StoredStep, options: StepOptions = {}): Promise<T> {
    if (stored.outcome === 'error') throw rebuildError(stored.error as never);
    const value = deserialize<T>(stored.result);
    if (options.schema) {
      try {
        await validatePayload(options.schema, value, `The stored result of step "${key}"`);
      } catch (error) {
        if (error instanceof InvalidPayloadError)
          throw new StepResultMismatchError(key, error.issues.map((i) => `${i.path || 'value'}: ${i.message}`).join('; '));
        throw error;
      }
    }
    return value;
  }

  private async runFresh<T>(
    name: string,
    key: string,
    fn: () => T | Promise<T>,
    options: ResolvedStepOptions,
    generated: boolean,
  ): Promise<T> {
    await this.commitPending();
    const startedAt = new Date();
    const { tracing, metrics } = this.deps.telemetry;
    const span = tracing.start(`durable.step ${name}`, {
      'durable.run_id': this.runId,
      'durable.workflow': this.workflow.name,
      'durable.step': key,
      'durable.attempt': this.run.attempt,
    });
    let step: StoredStep;
    let value: T | undefined;
    let failure: unknown;
    try {
      value = await span.within(() => this.callWithRetry(key, fn, options));
      step = { outcome: 'ok', result: serialize(value, `The result of step "${key}"`), error: null };
    } catch (error) {
      tagStep(error, key);
      span.fail(error);
      metrics?.stepDuration.observe(
        { workflow: this.workflow.name, step: name, outcome: 'error' },
        (Date.now() - startedAt.getTime()) / 1_000,
      );
      if (!isNonRetryable(error)) {
        span.end();
        throw error; // not stored: the step runs again on the next attempt
      }
      failure = error;
      step = { outcome: 'error', result: null, error: errorInfo(error) };
    }
    if (failure === undefined)
      metrics?.stepDuration.observe(
        { workflow: this.workflow.name, step: name, outcome: 'ok' },
        (Date.now() - startedAt.getTime()) / 1_000,
      );
    span.end();
    if (generated && failure === undefined && this.inflight.size === 1) {
      this.deferCheckpoint({ key, kind: 'step', step, startedAt });
      return value as T;
    }
    const kept = await this.checkpoint(key, 'step', step, startedAt);
    if (kept !== step) return this.replay<T>(key, kept, options);
    if (failure !== undefined) throw failure;
    return value as T;
  }

  private async callWithRetry<T>(key: string, fn: () => T | Promise<T>, options: ResolvedStepOptions): Promise<T> {
    const policy = options.resolvedRetry ?? resolveRetryPolicy(options.retry, NO_RETRY, `step "${key}"`);
    for (let attempt = 1; ; attempt++) {
      // A step begins only on a lease that surely holds a while (see Lease): else it could run again elsewhere.
      if (!this.lease.fresh && !(await this.lease.confirm())) return never();
      try {
        return await runScope.run({ execution: this, inStep: true }, fn);
      } catch (error) {
        if (attempt >= policy.maxAttempts || isNonRetryable(error) || !this.active) throw error;
        await this.wait(backoffMs(policy, attempt));
        if (!this.active) throw error; // the run ended (failed, parked) during the backoff: no attempt more
      }
    }
  }

  /** `ms` in-process, cut short (its timer cleared) when the lease is lost (a shutdown or a cancel does not wait it out) or the execution ends. */
  wait(ms: number): Promise<void> {
    let unsubscribe = (): unknown => undefined;
    const lost = new Promise<void>((resolve) => (unsubscribe = this.lease.onLost(resolve)));
    // Or once this execution has ended (its code failed or parked): a step's backoff must not hold the end for up to maxDelay.
    return settledWithin(Promise.race([lost, this.outcome]), ms).finally(unsubscribe);
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.inflight.add(promise);
    const forget = () => this.inflight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  private end(outcome: ExecutionOutcome): void {
    if (!this.active) return;
    this.active = false;
    this.settle(outcome);
  }
}

/** A promise that never settles and holds nothing, so the abandoned workflow code is collected. */
export function never(): Promise<never> {
  return new Promise<never>(() => undefined);
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.min(MAX_TIMER_MS, Math.max(0, ms))));
}

/** Waits for `work` to settle or `ms` to pass, whichever is first, and leaves no timer running: a process whose application has closed exits at once. */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(MAX_TIMER_MS, Math.max(0, ms)))))]);
  } finally {
    clearTimeout(timer);
  }
}
