import { Inject, Injectable, OnModuleInit, Type } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { notSingletonMessage } from '../durable.messages';
import { queueNamed } from '../queues/queue-config';
import { InvalidArgumentError } from '../errors';
import type { ChannelDefinition, DurableWorkflow, SignalDefinition, WorkflowOptions } from '../interfaces';
import type { ResolvedStepOptions } from '../runtime/execution';
import { DEFAULT_RUN_RETRY, NO_RETRY, resolveRetryPolicy } from '../runtime/retry-policy';
import { checkStepName } from '../runtime/checkpoint-keys';
import { checkStepOptions } from '../runtime/step-options';
import { runScope } from '../runtime/run-scope';
import { handled } from '../runtime/handled';
import { checkName } from '../schema/define-signal';
import { resolveScheduleSpec } from '../schema/schedule-spec';
import { toMs } from '../schema/duration';
import { keysOf, refuseUnknownKeys } from '../schema/known-keys';
import { DurableMetadataAccessor } from './durable-metadata.accessor';
import { WorkflowRegistry } from '../runtime/workflow.registry';

/**
 * At module init, finds every @Workflow provider and every @Step method on any provider. Workflows
 * go into the registry; step methods are wrapped on their instance so that, inside a run, a call is
 * memoized, and outside one it is the plain method. Every mistake fails the boot with its fix.
 */
@Injectable()
export class DurableExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly metadata: DurableMetadataAccessor,
    private readonly registry: WorkflowRegistry,
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
  ) {}

  onModuleInit(): void {
    this.registry.appVersion = this.options.appVersion;
    for (const wrapper of this.discovery.getProviders()) {
      const { instance, metatype } = wrapper;
      if (!instance || typeof instance !== 'object' || !metatype) continue;
      const workflow = this.metadata.workflow(metatype);
      if (workflow) this.registerWorkflow(wrapper, workflow.name, workflow.options);
      this.wrapSteps(wrapper);
    }
    this.checkScheduleNames();
  }

  /** A schedule's name is its identity in the database: two declarations of one name fail the boot. */
  private checkScheduleNames(): void {
    const seen = new Map<string, string>();
    for (const workflow of this.registry.all()) {
      for (const { name } of workflow.schedules) {
        const twin = seen.get(name);
        if (twin !== undefined) {
          throw new InvalidArgumentError(
            `Two schedules are named "${name}" (workflows "${twin}" and "${workflow.name}"); a schedule name is unique across the app.`,
          );
        }
        seen.set(name, workflow.name);
      }
    }
  }

  private registerWorkflow(wrapper: InstanceWrapper, name: string | undefined, options: WorkflowOptions): void {
    const metatype = wrapper.metatype as Type<DurableWorkflow>;
    if (!isSingleton(wrapper)) {
      throw new InvalidArgumentError(notSingletonMessage(`Workflow ${metatype.name}`));
    }
    if (typeof (wrapper.instance as DurableWorkflow).run !== 'function') {
      throw new InvalidArgumentError(
        `Workflow ${metatype.name} has no run(input, ctx) method; a @Workflow class implements DurableWorkflow.`,
      );
    }
    const workflowName = checkName(name ?? metatype.name, 'workflow');
    // A misspelt option (`timout`) would be ignored: runs without the deadline, queue or retries meant for them.
    refuseUnknownKeys(options, WORKFLOW_OPTION_KEYS, `Workflow "${workflowName}"`);
    const timeoutMs = options.timeout === undefined ? undefined : toMs(options.timeout, `Workflow "${workflowName}" timeout`);
    // 0 is refused as a start's timeout is: every run would be past its deadline as it began.
    if (timeoutMs !== undefined && timeoutMs <= 0)
      throw new InvalidArgumentError(`Workflow "${workflowName}" timeout must be more than 0.`);
    this.registry.add({
      name: workflowName,
      metatype,
      instance: wrapper.instance as DurableWorkflow,
      options,
      retry: resolveRetryPolicy(options.retry, DEFAULT_RUN_RETRY, `workflow "${workflowName}"`),
      signals: byName(options.signals, 'signal', workflowName),
      channels: byName(options.channels, 'channel', workflowName),
      schedules: (options.schedules ?? []).map((spec) => resolveScheduleSpec(spec, workflowName)),
      queue: options.queue === undefined ? null : queueNamed(this.options.queues, options.queue, `Workflow "${workflowName}"`).name,
      timeoutMs,
      deadlineGraceMs:
        options.deadlineGrace === undefined
          ? this.options.deadlineGraceMs
          : toMs(options.deadlineGrace, `Workflow "${workflowName}" deadlineGrace`),
    });
  }

  private wrapSteps(wrapper: InstanceWrapper): void {
    const instance = wrapper.instance as Record<string, unknown>;
    const prototype = Object.getPrototypeOf(instance);
    for (const methodName of this.scanner.getAllMethodNames(prototype)) {
      const method = prototype[methodName] as (...args: unknown[]) => unknown;
      const step = this.metadata.step(method);
      if (!step) continue;
      // Only this instance is wrapped: on any other the step would silently run as plain code.
      if (!isSingleton(wrapper)) {
        throw new InvalidArgumentError(notSingletonMessage(`@Step method ${methodName} of ${(wrapper.metatype as Type<unknown>).name}`));
      }
      if (instance[methodName] !== method) continue; // wrapped already (a provider listed twice)
      const name = checkStepName(checkName(step.name ?? methodName, 'step'), Boolean(step.options.key));
      checkStepOptions(step.options, name);
      const options: ResolvedStepOptions = {
        ...step.options,
        resolvedRetry: resolveRetryPolicy(step.options.retry, NO_RETRY, `step "${name}"`),
      };
      instance[methodName] = function durableStep(this: unknown, ...args: unknown[]) {
        const scope = runScope.getStore();
        if (!scope || scope.inStep) return method.apply(this, args); // outside a run, or inside a step: plain code
        return handled(scope.execution.step(name, () => method.apply(this, args), options, args));
      };
    }
  }
}

const WORKFLOW_OPTION_KEYS = keysOf<WorkflowOptions>({
  retry: true,
  signals: true,
  channels: true,
  schedules: true,
  queue: true,
  timeout: true,
  deadlineGrace: true,
});

/** Nest builds other instances of a request-scoped or transient provider later, from its prototype, which discovery cannot wrap. */
function isSingleton(wrapper: InstanceWrapper): boolean {
  return wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
}

function byName<D extends SignalDefinition<unknown> | ChannelDefinition<unknown>>(
  list: D[] | undefined,
  kind: string,
  workflow: string,
): Map<string, D> | undefined {
  if (!list) return undefined;
  const map = new Map<string, D>();
  for (const definition of list) {
    if (!definition || typeof definition.name !== 'string') {
      throw new InvalidArgumentError(
        `Workflow "${workflow}" lists a ${kind} that is not a definition; use define${kind === 'signal' ? 'Signal' : 'Channel'}('name', schema).`,
      );
    }
    if (map.has(definition.name)) throw new InvalidArgumentError(`Workflow "${workflow}" declares the ${kind} "${definition.name}" twice.`);
    map.set(definition.name, definition);
  }
  return map;
}
