import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { CHILD_STARTER, DURABLE_OPTIONS } from '../durable.constants';
import { WorkflowRegistry } from './workflow.registry';
import type { ErrorInfo, RunWarning } from '../interfaces';
import { JournalRepository, LoadedJournal, StepCheckpoint } from '../persistence/journal.repository';
import { ClaimedRun, RunRepository } from '../persistence/run.repository';
import { RunEndRepository } from '../persistence/run-end.repository';
import { RunEnd, WakeBus } from './wake-bus';
import type { ChildStarter } from './child-starter';
import { DbClock } from './db-clock';
import { errorInfo, isNonRetryable } from './errors';
import { Execution, ExecutionDeps } from './execution';
import { Journal } from './journal';
import type { Lease } from './lease';
import { MAX_TIMER_MS, type RunDeadline } from './run-deadline';
import { backoffMs, NO_RETRY, ResolvedRetryPolicy } from './retry-policy';
import { DeadlineExceededError } from '../errors';
import { deserialize, serialize } from '../schema/serializer';
import { DurableWorkflowContext } from './workflow-context';
import type { ResolvedDurableOptions } from '../durable-options';
import { DurableTelemetry } from '../observability/durable-telemetry';
import type { SpanHandle } from '../observability/tracing';

/**
 * Carries one claimed run through to its next resting state: executes `run()` against the journal,
 * then completes it, fails it, schedules its retry, or parks it. A park that loses the race with a
 * delivery (wake_seq moved) re-executes at once with a fresh journal instead of parking.
 */
@Injectable()
export class Executor implements OnModuleInit {
  private readonly logger = new Logger('DurableExecutor');
  private children!: ChildStarter;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly registry: WorkflowRegistry,
    private readonly runs: RunRepository,
    private readonly journals: JournalRepository,
    private readonly ends: RunEndRepository,
    private readonly bus: WakeBus,
    private readonly clock: DbClock,
    private readonly telemetry: DurableTelemetry,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * The child starter is looked up by its token once every provider exists, not injected: it
   * depends on the worker, which depends on this executor.
   */
  onModuleInit(): void {
    this.children = this.moduleRef.get<ChildStarter>(CHILD_STARTER);
  }

  /**
   * Resolves with the instant the run parked or backs off until, when known, and with its end when it
   * ended here. The caller announces that end (WakeBus.finished) once it has freed the run's slot, so
   * that a caller awaiting the result which starts its next run at once finds the slot free.
   */
  async execute(run: ClaimedRun, lease: Lease, actor: string): Promise<ExecutionResult> {
    if (run.lateness !== undefined) this.observeLateness(run, run.lateness);
    return this.telemetry.tracing.trace(
      `durable.execution ${run.workflow}`,
      { 'durable.run_id': run.id, 'durable.workflow': run.workflow, 'durable.attempt': run.attempt },
      run.traceContext,
      async (span) => {
        const result = await this.executeInSpan(run, lease, actor, span);
        if (lease.lost) span.set({ 'durable.outcome': lease.lost === 'revoked' ? 'cancelled' : 'lease-lost' });
        return result;
      },
    );
  }

  private async executeInSpan(run: ClaimedRun, lease: Lease, actor: string, span: SpanHandle): Promise<ExecutionResult> {
    const workflow = this.registry.resolve(run.workflow);
    const deps: ExecutionDeps = {
      journal: this.journals,
      bus: this.bus,
      clock: this.clock,
      registry: this.registry,
      children: this.children,
      inlineWaitMs: this.options.inlineWaitMs,
      telemetry: this.telemetry,
    };
    const input = deserialize(run.input);
    let journal = run.fresh
      ? Journal.empty(run.wakeSeq ?? '0', run.deadline)
      : this.observed(run.journal ?? (await this.journals.load(run.id)));
    for (;;) {
      if (lease.lost) return {};
      const execution = new Execution(run, workflow, journal, deps, lease);
      const outcome = await execution.execute(input, new DurableWorkflowContext(execution));
      if (lease.lost) return {};
      span.set({ 'durable.outcome': outcome.type });
      switch (outcome.type) {
        case 'lost':
          return {};
        case 'completed':
          return this.complete(run, outcome.output, actor, outcome.checkpoint);
        case 'failed':
          // Past the run's deadline a failed attempt is not retried: the next would only fail at the deadline again.
          return this.fail(run, outcome.error, execution.deadline.passed ? NO_RETRY : workflow.retry, actor, execution.deadline);
        case 'expired':
        case 'moved': {
          const ended = outcome.type === 'expired' && (await this.expire(run, execution.deadline.at!, workflow.deadlineGraceMs, actor));
          if (ended) return { end: ended };
          // An operator moved the deadline meanwhile: execute again under the new one. An expiry did not wait for
          // the steps in flight: they finish first (up to the new grace end), or the next execution would run them again.
          journal = this.observed(await this.journals.load(run.id));
          if (journal.leaseToken !== run.leaseToken) return {};
          if (outcome.type === 'expired') {
            const graceEnd = journal.deadline === undefined ? Infinity : journal.deadline + workflow.deadlineGraceMs;
            await execution.quiesce(Math.min(graceEnd - this.clock.now(), MAX_TIMER_MS));
            journal = this.observed(await this.journals.load(run.id));
            if (journal.leaseToken !== run.leaseToken) return {};
          }
          continue;
        }
        case 'park': {
          const attributes = {
            'durable.run_id': run.id,
            'durable.wait.kind': outcome.wait.reason.kind,
            'durable.wait.name': outcome.wait.name ?? '',
            ...(outcome.wait.wakeAt && { 'durable.wait.until': outcome.wait.wakeAt.toISOString() }),
          };
          // Ended when the park statement answers or fails (a failed one is recorded on it).
          const parked = await this.telemetry.tracing.trace(
            `durable.wait ${outcome.wait.reason.kind}`,
            attributes,
            undefined,
            async (wait) => {
              const done = await this.runs.park(
                run,
                outcome.wait,
                journal.wakeSeq,
                actor,
                unreachedWarning(execution.journal.steps.unreached()),
              );
              wait.set({ 'durable.parked': done });
              return done;
            },
          );
          if (parked) return { wakeAt: outcome.wait.wakeAt ?? undefined };
          // A delivery moved wake_seq since our last look (or an awaited run not our child ended): re-execute with a fresh journal.
          journal = this.observed(await this.journals.load(run.id));
          if (journal.leaseToken !== run.leaseToken) return {}; // taken over or cancelled meanwhile
        }
      }
    }
  }

  /** A claim's lateness, or the wait in a queue's backlog of a run admitted from it (a rate limit may make that hours). */
  private observeLateness(run: ClaimedRun, lateness: number): void {
    const metrics = this.telemetry.metrics;
    if (!metrics) return;
    if (run.admittedFrom === undefined) metrics.claimLatency.observe(Math.max(0, lateness));
    else metrics.queueWait.observe({ queue: run.admittedFrom }, Math.max(0, lateness));
  }

  private observed(loaded: LoadedJournal): Journal {
    this.clock.observe(loaded.dbNow, loaded.answeredAt);
    return Journal.from(loaded);
  }

  /** `checkpoint`: the last step's, written with the end (see Execution.commitPending). */
  private async complete(run: ClaimedRun, output: unknown, actor: string, checkpoint?: StepCheckpoint): Promise<ExecutionResult> {
    let encoded: string;
    try {
      encoded = serialize(output, `The output of run "${run.id}"`);
    } catch (error) {
      return { end: await this.end(run, 'failed', null, errorInfo(error), actor, undefined, checkpoint) };
    }
    // The value handed to local result() callers is the stored one, decoded, as a read would give it.
    return { end: await this.end(run, 'completed', encoded, null, actor, undefined, checkpoint) };
  }

  /** `deadline`: the backoff's wake is brought forward to it (scheduleRetrySql). */
  private async fail(
    run: ClaimedRun,
    error: unknown,
    retry: ResolvedRetryPolicy,
    actor: string,
    deadline: RunDeadline,
  ): Promise<ExecutionResult> {
    const info = errorInfo(error);
    const failures = run.attempt - run.attemptBase;
    if (!isNonRetryable(error) && failures < retry.maxAttempts) {
      const delayMs = backoffMs(retry, failures);
      this.logger.warn(
        `Run ${run.id} (${run.workflow}) attempt ${run.attempt} failed, retrying in ${delayMs} ms: ${info.name}: ${info.message}`,
      );
      const scheduled = await this.runs.scheduleRetry(run, info, delayMs, actor);
      const wakeAt = new Date(this.clock.now() + delayMs);
      return scheduled ? { wakeAt: deadline.capWake(wakeAt) ?? undefined } : {};
    }
    this.logger.error(`Run ${run.id} (${run.workflow}) failed: ${info.name}: ${info.message}`);
    return { end: await this.end(run, 'failed', null, info, actor) };
  }

  /**
   * Fails a run whose grace after `deadlineMs` (the deadline its execution enforced) is over, unless an
   * operator moved its deadline meanwhile (the statement checks the stored one) or the lease is gone:
   * undefined then, and the caller looks which.
   */
  private async expire(run: ClaimedRun, deadlineMs: number, graceMs: number, actor: string): Promise<RunEnd | undefined> {
    const deadline = new Date(deadlineMs);
    const error = new DeadlineExceededError(
      run.id,
      deadline,
      `Run "${run.id}" passed its deadline (${deadline.toISOString()}) and did not end within its grace of ${graceMs} ms.`,
    );
    const ended = await this.end(run, 'failed', null, errorInfo(error), actor, graceMs);
    if (ended) this.logger.warn(error.message);
    return ended;
  }

  private async end(
    run: ClaimedRun,
    status: 'completed' | 'failed',
    output: string | null,
    error: ErrorInfo | null,
    actor: string,
    graceMs?: number,
    checkpoint?: StepCheckpoint,
  ): Promise<RunEnd | undefined> {
    if (!(await this.ends.finish(run, status, output, error, actor, graceMs, checkpoint))) return undefined;
    this.telemetry.metrics?.ended.inc({ workflow: run.workflow, status });
    return status === 'completed' ? { status, output: deserialize(output) } : { status, error: error! };
  }
}

/** How one claim of a run ended here: parked or backing off until `wakeAt`, or ended (`end`), or neither (lost). */
export interface ExecutionResult {
  wakeAt?: Date;
  end?: RunEnd;
}

/**
 * The warning for checkpoints an earlier execution recorded that this one did not reach before it
 * parked again: the code no longer takes the path they were recorded on (a renamed step, a changed
 * branch; see the versioning guide). Null when there are none.
 */
function unreachedWarning(keys: string[]): RunWarning | null {
  if (!keys.length) return null;
  return {
    code: 'UNREACHED_CHECKPOINTS',
    message: `The code parked again without reaching ${keys.length} checkpoint(s) an earlier execution recorded (${keys.slice(0, 3).join(', ')}${keys.length > 3 ? ', …' : ''}): a renamed step or a changed path. See the versioning guide.`,
    keys: keys.slice(0, 20),
    at: new Date().toISOString(),
  };
}
