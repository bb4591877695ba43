import { Injectable } from '@nestjs/common';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { InvalidArgumentError, RunNotFoundError } from '../errors';
import { isStorableText, storableText } from '../schema/define-signal';
import { actorOf } from './actor';
import { knownRunId, runIdOf } from './run-id';
import { CALL_OPTIONS, checkCallOptions } from './call-options';
import type { ActorOptions, ForkOptions, RunFilter, RunHandle, RunView, StartOptions, TxOptions, WorkflowRef } from '../interfaces';
import { serializePayload } from '../schema/serializer';
import { MAX_DURATION_MS } from '../schema/duration';
import { RunControlRepository } from '../persistence/run-control.repository';
import { RunRepository } from '../persistence/run.repository';
import { DurableWorker } from '../worker/durable.worker';
import { WakeBus } from '../runtime/wake-bus';
import { DurableRunHandle } from './run-handle';
import { RunStarter } from './run-starter';
import { QueueReasons } from './queue-reasons';
import { DurableTelemetry } from '../observability/durable-telemetry';
import { MAX_CANCEL_REASON } from '../durable.constants';

/**
 * Starts runs and acts on them from outside: controllers, webhooks, scripts, the dashboard.
 * A call given an option it does not take (a misspelt one) throws InvalidArgumentError naming it, before anything is read or written.
 */
@Injectable()
export class WorkflowClient {
  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly starter: RunStarter,
    private readonly runs: RunRepository,
    private readonly control: RunControlRepository,
    private readonly worker: DurableWorker,
    private readonly bus: WakeBus,
    private readonly queueReasons: QueueReasons,
    private readonly telemetry: DurableTelemetry,
  ) {}

  /**
   * Starts a run of a workflow (by class or by name). With `runId`, idempotent: an existing run of the
   * same workflow comes back with `created: false`; of another workflow, RunConflictError.
   * With `manager`, the run is written in the caller's transaction and starts when it commits.
   * With `startAt` or `delay`, the run exists at once, `waiting` with reason `start`, and executes at
   * that instant; signals sent meanwhile are kept for it, `resume` starts it now, `cancel` cancels it.
   */
  async start<I, O>(workflow: WorkflowRef<I, O>, input: I, opts: StartOptions & TxOptions & ActorOptions = {}): Promise<RunHandle<O>> {
    checkCallOptions(opts, CALL_OPTIONS.start, 'start()');
    const registered = this.registry.resolve(workflow as WorkflowRef<unknown, unknown>);
    const { runId, created } = await this.starter.start({
      workflow: registered,
      input,
      runId: opts.runId,
      manager: opts.manager,
      actor: actorOf(opts),
      startAt: opts.startAt,
      delay: opts.delay,
      queueing: {
        queue: opts.queue,
        partitionKey: opts.partitionKey,
        priority: opts.priority,
        deduplicationId: opts.deduplicationId,
        debounce: opts.debounce,
      },
      limits: { timeout: opts.timeout, deadline: opts.deadline, timeoutIncludesQueue: opts.timeoutIncludesQueue },
      keys: opts.keys,
    });
    return new DurableRunHandle<O>(runId, created, this.runs, this.bus, this.executingHere);
  }

  /** A handle on an existing run (not checked until used). */
  handle<O>(runId: string): RunHandle<O> {
    return new DurableRunHandle<O>(runId, false, this.runs, this.bus, this.executingHere);
  }

  private readonly executingHere = (runId: string) => this.worker.isExecuting(runId);

  async getRun(runId: string): Promise<RunView> {
    const run = await this.runs.get(knownRunId(runId));
    if (!run) throw new RunNotFoundError(runId);
    await this.queueReasons.annotate([run], { position: true });
    return run;
  }

  /** Newest first, keyset-paged: pass `nextCursor` back as `cursor` for the next page. */
  async listRuns(filter: RunFilter = {}): Promise<{ runs: RunView[]; nextCursor?: string }> {
    checkCallOptions(filter, CALL_OPTIONS.listRuns, 'listRuns()');
    const page = await this.runs.list(filter);
    await this.queueReasons.annotate(page.runs);
    return page;
  }

  /**
   * Ends the current wait early: a sleep or backoff finishes now; other waits are re-checked now. A sleep
   * whose run's deadline has passed and is not yet met is not ended: the run is due by its deadline
   * already, and meets it there. Nor is a delayed start whose deadline passed before it began: it will
   * never begin, and the sweeper fails it. Answers true when the run was made due now (a `resumed` in its
   * history), false when there was nothing to end (the run pending, running, waiting but due already, or
   * a delayed start past its deadline).
   */
  async resume(runId: string, opts: ActorOptions = {}): Promise<boolean> {
    checkCallOptions(opts, CALL_OPTIONS.operator, 'resume()');
    return (await this.control.resume(knownRunId(runId), actorOf(opts))).changed.length > 0;
  }

  /**
   * Cancels the run and its unfinished children at once; a running execution's later writes are refused.
   * `reason` (stored on each run cancelled) is text of at most 1,000 characters: anything else is refused (InvalidArgumentError) and nothing changes.
   */
  async cancel(runId: string, reason?: string, opts: ActorOptions = {}): Promise<void> {
    checkCallOptions(opts, CALL_OPTIONS.operator, 'cancel()');
    const { changed, ended } = await this.control.cancel(knownRunId(runId), cancelReason(reason), actorOf(opts));
    this.telemetry.ended('cancelled', ended);
    this.worker.revoke(changed);
  }

  /**
   * Sets (extends, shortens) or clears (null) the deadline of a run that has not ended, or of a failed
   * run before a retry; attached children that had inherited its deadline follow it. A deadline
   * already past counts as now: the awaited call throws DeadlineExceededError now, and the run has its whole grace (a graceful stop);
   * a run that has not begun (queued, or waiting for its delayed start or for a worker) is failed instead,
   * by the sweeper's next pass, having nothing to clean up.
   * Recorded in history.
   */
  async setDeadline(runId: string, deadline: Date | null, opts: ActorOptions = {}): Promise<void> {
    checkCallOptions(opts, CALL_OPTIONS.operator, 'setDeadline()');
    if (deadline !== null && (!(deadline instanceof Date) || Number.isNaN(deadline.getTime())))
      throw new InvalidArgumentError(
        `setDeadline needs a valid Date, or null to clear the deadline; got ${deadline instanceof Date ? 'an invalid Date' : typeof deadline}.`,
      );
    // As a start's deadline, at most 100 years ahead; a past one counts as now, but not from before Postgres' range.
    if (deadline !== null && Math.abs(deadline.getTime() - Date.now()) > MAX_DURATION_MS)
      throw new InvalidArgumentError(`setDeadline needs an instant within 100 years of now; got ${deadline.toISOString()}.`);
    await this.control.setDeadline(knownRunId(runId), deadline, actorOf(opts));
  }

  /**
   * A new run of the source's workflow that runs again from the checkpoint `fromStep`: its journal
   * holds copies of the source's checkpoints recorded before it, the signals and messages `signals`
   * selects, and the children spawned before it (reused, not restarted). The source is untouched;
   * both record the link. Works whatever the source's status. Unknown run: RunNotFoundError; its
   * workflow not registered here: WorkflowNotFoundError; unknown step or a taken id: InvalidArgumentError;
   * nothing created.
   */
  async fork<O = unknown>(runId: string, opts: ForkOptions & ActorOptions): Promise<RunHandle<O>> {
    checkCallOptions(opts, CALL_OPTIONS.fork, 'fork()');
    const source = await this.runs.brief(knownRunId(runId));
    if (!source) throw new RunNotFoundError(runId);
    const fromStep = checkpointKey(opts?.fromStep);
    const signals = opts.signals ?? 'before';
    if (signals !== 'before' && signals !== 'all')
      throw new InvalidArgumentError(`fork signals must be 'before' or 'all'; got ${JSON.stringify(opts.signals)}.`);
    const forkId = runIdOf(opts.runId);
    const input = opts.input === undefined ? null : serializePayload(opts.input, `The input of the fork of "${runId}"`);
    const forked = await this.control.fork({
      sourceId: runId,
      fromStep,
      forkId,
      input,
      signals,
      actor: actorOf(opts),
      appVersion: this.registry.appVersion,
      // Registered here or refused (WorkflowNotFoundError): the fork's deadline is its workflow's timeout.
      timeoutMs: this.registry.resolve(source.workflow).timeoutMs ?? null,
      traceContext: this.telemetry.tracing.captureContext(),
    });
    if (!forked.source) throw new RunNotFoundError(runId);
    if (!forked.step)
      throw new InvalidArgumentError(`Run "${runId}" has no checkpoint "${fromStep}" to fork from; its journal tab lists the keys it has.`);
    if (forked.gone)
      throw new InvalidArgumentError(
        `Cannot fork run "${runId}" from "${fromStep}": its child "${forked.gone.child}" (${forked.gone.spawn}), spawned before that step, no longer exists (retention deleted it); fork from "${forked.gone.spawn}" or earlier to start it anew.`,
      );
    if (forked.created === null) throw new InvalidArgumentError(`A run "${forkId}" exists already; give the fork another runId.`);
    this.telemetry.started([forked.created]);
    this.worker.nudge();
    return new DurableRunHandle<O>(forkId, true, this.runs, this.bus, this.executingHere);
  }

  /**
   * Runs a failed run again from its checkpoints, its stored permanent step failures cleared. Unknown
   * run: RunNotFoundError. Refused (InvalidTransitionError, nothing changed) for a run not failed, one
   * whose deadline has passed, one whose deduplication id an unfinished run of its queue holds, and an
   * attached child whose parent (or an ancestor it is attached to) was cancelled.
   */
  async retry(runId: string, opts: ActorOptions = {}): Promise<void> {
    checkCallOptions(opts, CALL_OPTIONS.operator, 'retry()');
    await this.control.retry(knownRunId(runId), actorOf(opts));
    this.worker.nudge();
  }
}

/**
 * A fork's `fromStep`: a checkpoint key as the journal stores it, which runs past a name's 200 characters
 * (`child:<step>`, `<step>#2`, an escaped name, a keyed step's key); one the run does not have is refused after.
 */
function checkpointKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > 10_000 || !isStorableText(key))
    throw new InvalidArgumentError(
      `fork fromStep must be a checkpoint key: a non-empty string of at most 10,000 characters, without NUL or lone surrogates; got ${typeof key === 'string' ? `${key.length} characters` : typeof key}.`,
    );
  return key;
}

/** A cancel's reason as stored: none (undefined or null), or text of at most MAX_CANCEL_REASON characters once made storable. */
function cancelReason(reason: unknown): string | undefined {
  if (reason === undefined || reason === null) return undefined;
  const stored = typeof reason === 'string' ? storableText(reason) : undefined;
  if (stored === undefined || stored.length > MAX_CANCEL_REASON)
    throw new InvalidArgumentError(
      `cancel's reason must be text of at most ${MAX_CANCEL_REASON} characters as stored (a NUL takes two); got ${stored === undefined ? typeof reason : `${stored.length} characters`}.`,
    );
  return stored;
}
