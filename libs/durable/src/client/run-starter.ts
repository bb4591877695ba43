import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import type { RegisteredWorkflow } from '../runtime/workflow.registry';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { InvalidArgumentError, RunConflictError } from '../errors';
import { RunRepository } from '../persistence/run.repository';
import type { ChildStarter } from '../runtime/child-starter';
import { serializePayload } from '../schema/serializer';
import { isStorableText } from '../schema/define-signal';
import { DurableWorker } from '../worker/durable.worker';
import { DurableTelemetry } from '../observability/durable-telemetry';
import type { Duration } from '../interfaces';
import { startDelayOf } from './start-delay';

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
}

/**
 * Inserts runs, for the client and for child spawns. With a free slot here and no caller
 * transaction, the run is inserted already claimed and executed at once (no claim round trip);
 * otherwise it is inserted pending and the NOTIFY sent on commit wakes a worker. A delayed start
 * (`startAt` or `delay`) whose instant is ahead is inserted waiting for it, reason `start`.
 */
@Injectable()
export class RunStarter implements ChildStarter {
  constructor(
    private readonly runs: RunRepository,
    private readonly worker: DurableWorker,
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly telemetry: DurableTelemetry,
  ) {}

  async start(args: StartArgs): Promise<{ runId: string; created: boolean }> {
    const { runId, created } = await this.insert(args);
    return { runId, created };
  }

  async startChild(args: {
    parentId: string;
    parentToken: string;
    step: string;
    childId: string;
    workflow: RegisteredWorkflow;
    input: unknown;
  }): Promise<boolean> {
    const { parentLost } = await this.insert({
      workflow: args.workflow,
      input: args.input,
      runId: args.childId,
      derivedId: true,
      parentId: args.parentId,
      parentStep: args.step,
      parentToken: args.parentToken,
      actor: `run:${args.parentId}`,
    });
    return !parentLost;
  }

  /** Inserts the run; `parentLost` when a child's parent no longer holds the lease token given (nothing inserted). */
  private async insert(args: StartArgs): Promise<{ runId: string; created: boolean; parentLost?: true }> {
    const runId = args.runId ?? randomUUID();
    if (typeof runId !== 'string' || runId.length === 0 || (runId.length > 200 && !args.derivedId) || !isStorableText(runId)) {
      throw new InvalidArgumentError(
        `runId must be a non-empty string of at most 200 characters, without NUL or lone surrogates; got ${typeof runId === 'string' ? `${runId.length} characters` : typeof runId}.`,
      );
    }
    const delayed = startDelayOf(args);
    const input = serializePayload(args.input, `The input of workflow "${args.workflow.name}"`);
    const started = await this.worker.reserving(
      !args.manager,
      (claimBy) =>
        this.runs.start(
          {
            id: runId,
            workflow: args.workflow.name,
            input,
            claimBy: claimBy ?? undefined,
            leaseMs: this.options.leaseMs,
            parentId: args.parentId,
            parentStep: args.parentStep,
            parentToken: args.parentToken,
            actor: args.actor,
            traceContext: this.telemetry.tracing.captureContext(),
            ...delayed,
          },
          args.manager,
        ),
      (result) => (typeof result === 'object' && result !== null && 'leaseToken' in result ? result : undefined),
    );
    if (started === 'parent-lost') return { runId, created: false, parentLost: true };
    if (started === null) {
      const existing = (await this.runs.brief(runId))?.workflow;
      if (existing !== undefined && existing !== args.workflow.name) throw new RunConflictError(runId, existing, args.workflow.name);
      return { runId, created: false };
    }
    this.telemetry.metrics?.started.inc({ workflow: args.workflow.name });
    if (started === 'pending' && !args.manager) this.worker.nudge();
    if (typeof started === 'object' && 'startsAt' in started) this.worker.wakeAt(started.startsAt);
    return { runId, created: true };
  }
}
