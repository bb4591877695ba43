import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RegisteredWorkflow } from '../runtime/workflow.registry';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { RunConflictError } from '../errors';
import { RunLimits, RunRepository } from '../persistence/run.repository';
import type { ChildStartArgs, ChildStarter } from '../runtime/child-starter';
import { serializePayload } from '../schema/serializer';
import { DurableWorker } from '../worker/durable.worker';
import { DurableTelemetry } from '../observability/durable-telemetry';
import type { Duration, QueueStartOptions, StartOptions } from '../interfaces';
import { QueuePlacement, queuePlacementOf } from '../queues/queue-placement';
import { admitsAtStart } from '../queues/queue-config';
import { startDelayOf } from './start-delay';
import { checkStartBeforeDeadline, runLimitsOf } from './run-limits';
import { runIdOf } from './run-id';
import { checkKeys } from '../schema/business-keys';

export interface StartArgs {
  workflow: RegisteredWorkflow;
  input: unknown;
  runId?: string;
  /** A child's id, derived from its parent's and its step: longer than a caller's id may be. */
  derivedId?: boolean;
  parentId?: string;
  parentStep?: string;
  /** A child's parent's lease token: the child is inserted only while the parent holds it. */
  parentToken?: string;
  manager?: EntityManager;
  actor: string;
  /** A delayed start: the run waits (reason `start`) until this instant, then executes. Not with `delay`. */
  startAt?: Date;
  /** A delayed start, measured from the database's clock. Not with `startAt`. */
  delay?: Duration;
  /** The queue options of the start (the workflow's queue applies without them). */
  queueing?: QueueStartOptions;
  /** The run's deadline (the workflow's `timeout` applies without one). */
  limits?: Pick<StartOptions, 'timeout' | 'deadline' | 'timeoutIncludesQueue'>;
  /** A child that keeps neither its parent's deadline nor its parent's cancel. */
  detached?: boolean;
  /** Its business keys. */
  keys?: Record<string, string>;
}

/**
 * Inserts runs, for the client and for child spawns. With a free slot here and no caller transaction,
 * the run is inserted already claimed and executed at once (no claim round trip; a plain one in one
 * commit with the concurrent starts, see RunRepository.start), a queued one only when its queue has a
 * free slot too (see startRunSql); otherwise it is inserted pending and the NOTIFY sent on commit
 * wakes a worker. A delayed start (`startAt` or `delay`) whose instant is ahead is inserted waiting
 * for it, reason `start`.
 */
@Injectable()
export class RunStarter implements ChildStarter {
  constructor(
    private readonly runs: RunRepository,
    private readonly worker: DurableWorker,
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly telemetry: DurableTelemetry,
  ) {}

  /** Whether this instance executes a run: made once, not per start (StartRunArgs.executingHere). */
  private readonly executingHere = (runId: string) => this.worker.isExecuting(runId);

  async start(args: StartArgs): Promise<{ runId: string; created: boolean }> {
    const { runId, created } = await this.insert(args);
    return { runId, created };
  }

  async startChild(args: ChildStartArgs): Promise<boolean> {
    const { parentLost } = await this.insert({
      workflow: args.workflow,
      input: args.input,
      runId: args.childId,
      derivedId: true,
      parentId: args.parentId,
      parentStep: args.step,
      parentToken: args.parentToken,
      actor: `run:${args.parentId}`,
      detached: args.detached,
      queueing: args.queueing,
    });
    return !parentLost;
  }

  /** Inserts the run; `parentLost` when a child's parent no longer holds the lease token given (nothing inserted). */
  private async insert(args: StartArgs): Promise<{ runId: string; created: boolean; parentLost?: true }> {
    const runId = runIdOf(args.runId, args.derivedId);
    const delayed = startDelayOf(args);
    const limits = runLimitsOf(args.limits ?? {}, args.workflow);
    const keys = args.keys === undefined ? undefined : checkKeys(args.keys, 'The start option keys');
    const placement = queuePlacementOf(
      { ...args.queueing, runId: args.runId, startAt: args.startAt, delay: args.delay },
      args.workflow.queue,
      this.options.queues,
    );
    checkStartBeforeDeadline(delayed, limits, placement.debounce?.delayMs);
    const input = serializePayload(args.input, `The input of workflow "${args.workflow.name}"`);
    if (placement.debounce) return this.debounce(args, runId, input, { ...placement, debounce: placement.debounce }, limits, keys);
    const queue = placement.queue === null ? null : this.options.queues.get(placement.queue)!;
    const started = await this.worker.reserving(
      // A queued run begins here only in a free slot of a queue whose one limit is concurrency; else admission takes it.
      !args.manager && (queue === null || admitsAtStart(queue)),
      (claimBy) =>
        this.runs.start(
          {
            id: runId,
            workflow: args.workflow.name,
            input,
            claimBy: claimBy ?? undefined,
            executingHere: this.executingHere,
            leaseMs: this.options.leaseMs,
            parentId: args.parentId,
            parentStep: args.parentStep,
            parentToken: args.parentToken,
            actor: args.actor,
            traceContext: this.telemetry.tracing.captureContext(),
            ...delayed,
            placement,
            queueConcurrency: queue?.concurrency,
            limits,
            detached: args.detached,
            keys,
            appVersion: this.options.appVersion,
          },
          args.manager,
        ),
      (result) => (typeof result === 'object' && result !== null && 'leaseToken' in result ? result : undefined),
    );
    if (started === 'parent-lost') return { runId, created: false, parentLost: true };
    if (started !== null && typeof started === 'object' && 'duplicateOf' in started) {
      if (started.workflow !== args.workflow.name)
        throw deduplicatedByOther(placement, started.duplicateOf, started.workflow, args.workflow.name);
      return { runId: started.duplicateOf, created: false };
    }
    if (started === null) {
      const existing = await this.runs.brief(runId, args.manager);
      if (existing && existing.workflow !== args.workflow.name) throw new RunConflictError(runId, existing.workflow, args.workflow.name);
      // A child's id is its parent's and its step's: a run of that id that is not that child (started by a
      // client, or another parent's child whose step name holds a '/') is not adopted as it.
      if (existing && args.parentId !== undefined && (existing.parentId !== args.parentId || existing.parentStep !== args.parentStep)) {
        throw new RunConflictError(
          runId,
          existing.workflow,
          args.workflow.name,
          `Run "${runId}" already exists and is not the child of run "${args.parentId}" at step "${args.parentStep}"; ` +
            'give that child step another name.',
        );
      }
      // Nor is the child of an earlier run under the parent's id, which retention deleted and kept the child of (by its own age).
      if (existing?.beforeParent && args.parentId !== undefined) {
        throw new RunConflictError(
          runId,
          existing.workflow,
          args.workflow.name,
          `Run "${runId}" is the child of an earlier run "${args.parentId}", deleted by retention while its child was kept; ` +
            'this run cannot take it as its own: start the parent under another id.',
        );
      }
      return { runId, created: false };
    }
    this.telemetry.metrics?.started.inc({ workflow: args.workflow.name });
    if (started === 'pending' && !args.manager) {
      if (placement.queue === null) this.worker.nudge();
      else this.worker.nudgeQueue(placement.queue);
    }
    if (typeof started === 'object' && 'startsAt' in started) this.worker.wakeAt(started.startsAt);
    return { runId, created: true };
  }

  /** A debounced start: the key's run not yet begun takes the input and instant, or a new one waits for it. */
  private async debounce(
    args: StartArgs,
    runId: string,
    input: string,
    placement: QueuePlacement & { debounce: NonNullable<QueuePlacement['debounce']> },
    limits: RunLimits,
    keys: Record<string, string> | undefined,
  ): Promise<{ runId: string; created: boolean }> {
    const debounced = await this.runs.debounce(
      {
        id: runId,
        workflow: args.workflow.name,
        input,
        actor: args.actor,
        traceContext: this.telemetry.tracing.captureContext(),
        placement,
        limits,
        keys,
        appVersion: this.options.appVersion,
      },
      args.manager,
    );
    if (debounced.created) this.telemetry.metrics?.started.inc({ workflow: args.workflow.name });
    // As `started`, counted when the statement answers, also inside a transaction that may yet roll back.
    this.telemetry.ended('failed', Array<string>(debounced.expired).fill(args.workflow.name));
    this.worker.wakeAt(debounced.startsAt);
    return { runId: debounced.runId, created: debounced.created };
  }
}

/** A start whose deduplication id a run of another workflow holds: returning that run would answer for the wrong workflow. */
function deduplicatedByOther(placement: QueuePlacement, holder: string, holderWorkflow: string, workflow: string): RunConflictError {
  return new RunConflictError(
    holder,
    holderWorkflow,
    workflow,
    `The deduplication id "${placement.deduplicationId}" of queue "${placement.queue}" is held by run "${holder}" of workflow ` +
      `"${holderWorkflow}", not "${workflow}": nothing was started. Give each workflow's starts ids of their own.`,
  );
}
