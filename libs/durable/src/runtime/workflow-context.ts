import type {
  ChannelMessage,
  ChannelRef,
  ChildHandle,
  ChildResult,
  ChildStartOptions,
  Duration,
  SelectArm,
  SelectArms,
  SelectOptions,
  SelectResult,
  SignalOutcome,
  SignalRef,
  StepOptions,
  WorkflowContext,
  WorkflowRef,
} from '../interfaces';
import { checkName } from '../schema/define-signal';
import { checkStepOptions } from './step-options';
import { checkStepName } from './checkpoint-keys';
import { NO_RETRY, resolveRetryPolicy } from './retry-policy';
import type { Execution } from './execution';
import { runScope } from './run-scope';
import { ack, consume, receive } from './primitives/channels';
import { all, startChild } from './primitives/children';
import { waitForSignal, waitForSignalWithin } from './primitives/signals';
import { MessageArm, select, SignalArm, TimerArm } from './primitives/select';
import { sleep, sleepFor } from './primitives/sleep';
import { setKeys } from './primitives/keys';
import { patched } from './primitives/patched';
import { handled } from './handled';

/** The `ctx` handed to `run(input, ctx)`: the durable primitives, bound to one execution. */
export class DurableWorkflowContext implements WorkflowContext {
  constructor(private readonly execution: Execution) {}

  get runId(): string {
    return this.execution.runId;
  }

  get workflow(): string {
    return this.execution.workflow.name;
  }

  get attempt(): number {
    return this.execution.run.attempt;
  }

  step<T>(name: string, fn: () => T | Promise<T>, options: StepOptions = {}): Promise<T> {
    return handled(this.checkedStep(name, fn, options));
  }

  /** A step, its name and options checked first: bad ones reject, as the step would. */
  private async checkedStep<T>(name: string, fn: () => T | Promise<T>, options: StepOptions): Promise<T> {
    checkName(name, 'step');
    if (runScope.getStore()?.inStep) return fn(); // a step inside a step is plain code
    checkStepName(name, Boolean(options.key));
    checkStepOptions(options, name);
    // Checked before the step is looked up or run: a bad policy fails the run (InvalidArgumentError) and journals nothing.
    const resolved = options.retry ? { ...options, resolvedRetry: resolveRetryPolicy(options.retry, NO_RETRY, `step "${name}"`) } : options;
    return this.execution.step(name, fn, resolved, []);
  }

  sleep(name: string, duration: Duration): Promise<void> {
    return handled(sleepFor(this.execution, name, duration));
  }

  sleepUntil(name: string, at: Date): Promise<void> {
    return handled(sleep(this.execution, name, undefined, at));
  }

  waitForSignal<T>(signal: SignalRef<T>): Promise<T>;
  waitForSignal<T>(signal: SignalRef<T>, opts: { timeout: Duration }): Promise<SignalOutcome<T>>;
  waitForSignal<T>(signal: SignalRef<T>, opts?: { timeout: Duration }): Promise<T | SignalOutcome<T>> {
    return handled<T | SignalOutcome<T>>(
      opts === undefined ? waitForSignal(this.execution, signal) : waitForSignalWithin(this.execution, signal, opts.timeout),
    );
  }

  receive<T>(channel: ChannelRef<T>): Promise<ChannelMessage<T>> {
    return handled(receive(this.execution, channel));
  }

  ack(channel: ChannelRef<unknown>, key: string): Promise<void> {
    return handled(ack(this.execution, channel, key));
  }

  consume<T>(
    channel: ChannelRef<T>,
    handle: (message: ChannelMessage<T>) => unknown,
    opts: { until: (message: ChannelMessage<T>) => boolean },
  ): Promise<ChannelMessage<T>> {
    return handled(consume(this.execution, channel, handle, opts.until));
  }

  startChild<I, O>(workflow: WorkflowRef<I, O>, input: I, opts: ChildStartOptions): Promise<ChildHandle<O>> {
    return handled(startChild(this.execution, workflow, input, opts));
  }

  all<T extends readonly ChildHandle<unknown>[]>(handles: T): Promise<{ [K in keyof T]: ChildResult<T[K]> }> {
    return handled(all(handles));
  }

  select<A extends SelectArms>(name: string, arms: A, opts?: SelectOptions): Promise<SelectResult<A>> {
    return handled(select(this.execution, name, arms, opts));
  }

  signal<T>(signal: SignalRef<T>): SelectArm<T> {
    return new SignalArm(signal);
  }

  message<T>(channel: ChannelRef<T>): SelectArm<ChannelMessage<T>> {
    return new MessageArm<ChannelMessage<T>>(channel);
  }

  timer(at: Duration | Date): SelectArm<Date> {
    return new TimerArm(at);
  }

  setKeys(keys: Record<string, string>): Promise<void> {
    return handled(setKeys(this.execution, keys));
  }

  patched(id: string): Promise<boolean> {
    return handled(patched(this.execution, id));
  }
}
