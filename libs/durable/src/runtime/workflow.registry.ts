import { Injectable, Type } from '@nestjs/common';
import { InvalidArgumentError, WorkflowNotFoundError } from '../errors';
import type { ChannelDefinition, DurableWorkflow, SignalDefinition, WorkflowOptions, WorkflowRef } from '../interfaces';
import type { ResolvedRetryPolicy } from './retry-policy';
import type { ResolvedSchedule } from '../schema/schedule-spec';

/** A workflow as the runtime knows it after discovery. */
export interface RegisteredWorkflow {
  name: string;
  metatype: Type<DurableWorkflow>;
  instance: DurableWorkflow;
  options: WorkflowOptions;
  retry: ResolvedRetryPolicy;
  /** Declared signals and channels by name; undefined when the workflow accepts any. */
  signals?: Map<string, SignalDefinition<unknown>>;
  channels?: Map<string, ChannelDefinition<unknown>>;
  /** Its declared schedules, checked. */
  schedules: ResolvedSchedule[];
  /** The queue its runs wait in (`@Workflow(name, { queue })`, a name the module declares); null: none. */
  queue: string | null;
  /** `@Workflow(name, { timeout })` in milliseconds; undefined: no deadline unless a start gives one. */
  timeoutMs?: number;
  /** How long its runs go on after their deadline before they are failed. */
  deadlineGraceMs: number;
}

/** What a schedule's runs of `name` take from the workflow: its queue and its timeout. */
export function scheduledWorkflow(
  registry: WorkflowRegistry,
  name: string,
): { queue: string | null; timeoutMs: number | null; appVersion: string | null } {
  // Registered here or refused (WorkflowNotFoundError): a run inserted without its workflow's queue would bypass its limits.
  const workflow = registry.resolve(name);
  return { queue: workflow.queue ?? null, timeoutMs: workflow.timeoutMs ?? null, appVersion: registry.appVersion ?? null };
}

/** The workflows of this application, by name and by class; filled by the explorer at boot. */
@Injectable()
export class WorkflowRegistry {
  private readonly byName = new Map<string, RegisteredWorkflow>();
  private readonly byClass = new Map<Function, RegisteredWorkflow>();
  /** This application's version (the module's `appVersion`), stamped on the runs it creates. */
  appVersion: string | null = null;

  add(workflow: RegisteredWorkflow): void {
    const existing = this.byName.get(workflow.name);
    if (existing && existing.metatype !== workflow.metatype) {
      throw new InvalidArgumentError(
        `Two workflows are named "${workflow.name}": ${existing.metatype.name} and ${workflow.metatype.name}. ` +
          "Give one of them another name with @Workflow('other-name'); the name is stored with every run, so keep the older one.",
      );
    }
    this.byName.set(workflow.name, workflow);
    this.byClass.set(workflow.metatype, workflow);
  }

  /** The workflow a ref names; WorkflowNotFoundError when it is not registered here. */
  resolve(ref: WorkflowRef<unknown, unknown>): RegisteredWorkflow {
    const found = typeof ref === 'string' ? this.byName.get(ref) : this.byClass.get(ref);
    if (!found) throw new WorkflowNotFoundError(typeof ref === 'string' ? ref : (ref?.name ?? String(ref)), this.names());
    return found;
  }

  find(name: string): RegisteredWorkflow | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  all(): RegisteredWorkflow[] {
    return [...this.byName.values()];
  }
}
