import { ChildWorkflowFailedError } from '../../errors';
import { InvalidArgumentError } from '../../errors';
import type { ChildHandle, ChildResult, ChildStartOptions, WorkflowRef } from '../../interfaces';
import type { StoredChild, StoredStep } from '../../persistence/journal.repository';
import { checkName } from '../../schema/define-signal';
import { keysOf, refuseUnknownKeys } from '../../schema/known-keys';
import { Execution, never } from '../execution';
import { deserialize, serialize } from '../../schema/serializer';
import { handled } from '../handled';

const CHILD_OPTION_KEYS = keysOf<ChildStartOptions>({ step: true, detached: true, queue: true, partitionKey: true, priority: true });

/**
 * Spawns a child run memoized by `step`: the child's id is derived from the parent's id and the step,
 * so a replay, or a concurrent execution of the parent, reattaches to the same child.
 */
export async function startChild<I, O>(
  execution: Execution,
  ref: WorkflowRef<I, O>,
  input: I,
  opts: ChildStartOptions,
): Promise<ChildHandle<O>> {
  if (!execution.isActive) return never();
  await execution.enter('startChild');
  const step = checkName(opts?.step, 'child step');
  refuseUnknownKeys(opts, CHILD_OPTION_KEYS, `startChild("${step}")`);
  if (opts.detached !== undefined && typeof opts.detached !== 'boolean')
    throw new InvalidArgumentError(`startChild("${step}"): detached must be a boolean; got ${typeof opts.detached}.`);
  const key = `child:${step}`;
  const stored = execution.journal.steps.get(key);
  // A fork reuses the children its source spawned before the fork's step: the stored spawn names them.
  const childId = stored ? deserialize<{ runId: string }>(stored.result).runId : `${execution.runId}/${step}`;
  if (!stored) {
    const workflow = execution.deps.registry.resolve(ref as WorkflowRef<unknown, unknown>);
    const started = await execution.deps.children.startChild({
      parentId: execution.runId,
      parentToken: execution.lease.token,
      step,
      childId,
      workflow,
      input,
      detached: opts.detached ?? false,
      queueing: { queue: opts.queue, partitionKey: opts.partitionKey, priority: opts.priority },
    });
    if (!started) return execution.lose();
    await execution.checkpoint(
      key,
      'child',
      { outcome: 'ok', result: serialize({ runId: childId, workflow: workflow.name }, 'a child spawn'), error: null },
      null,
    );
  }
  return new ExecutionChildHandle<O>(execution, childId, step);
}

/**
 * Fan-in: resolves like Promise.all; the first unfinished child parks the parent. Once one child's
 * failure has rejected it, the others are no longer awaited: their waits end without parking the
 * parent on them (the workflow's catch goes on, and would have been parked on a child it abandoned).
 */
export function all<T extends readonly ChildHandle<unknown>[]>(handles: T): Promise<{ [K in keyof T]: ChildResult<T[K]> }> {
  let rejected = false;
  const awaited = () => !rejected;
  const reject = () => (rejected = true);
  return Promise.all(
    handles.map((handle) =>
      (handle instanceof ExecutionChildHandle ? handle.resultWhile(awaited, reject) : handle.result()).catch((error: unknown) => {
        reject();
        throw error;
      }),
    ),
  ) as Promise<{ [K in keyof T]: ChildResult<T[K]> }>;
}

export class ExecutionChildHandle<O> implements ChildHandle<O> {
  constructor(
    private readonly execution: Execution,
    readonly runId: string,
    private readonly step: string,
  ) {}

  /** Whether this handle was made by `execution` (a select arm must be a child of the run selecting). */
  belongsTo(execution: Execution): boolean {
    return this.execution === execution;
  }

  /**
   * The child's outcome, memoized in the parent's journal. Waits in-process up to inlineWaitMs for
   * the child to end, then parks the parent (no worker held, no retry used) until the child's end wakes it.
   */
  result(): Promise<O> {
    return handled(this.resultWhile(() => true));
  }

  /**
   * As result(), while `awaited()` says the workflow still awaits it; after, its wait ends and never
   * settles. `failed` is told as soon as the child is known to have failed (or been cancelled), before
   * that is journaled: the other handles of an `all` stop waiting then, not one write later, when one
   * of them may have parked the parent meanwhile.
   */
  async resultWhile(awaited: () => boolean, failed?: () => void): Promise<O> {
    const { execution } = this;
    if (!execution.isActive) return never();
    await execution.enter('result');
    const key = `child-result:${this.step}`;
    execution.deadline.replayAt(key);
    const stored = execution.journal.steps.get(key);
    if (stored) return execution.replay<O>(key, stored);
    const { journal, deps } = execution;
    const budgetEnd = Date.now() + deps.inlineWaitMs;
    let refreshed = false;
    const wakes = execution.wakeCursor();
    for (;;) {
      if (!awaited()) return never();
      const child = journal.children.get(this.runId);
      if (child) {
        if (child.status !== 'completed') failed?.();
        const kept = await execution.checkpoint(key, 'child-result', childOutcome(child), null);
        return execution.replay<O>(key, kept);
      }
      if (refreshed) {
        await execution.deadline.beforeWait(key);
        if (!awaited()) return never();
        const left = execution.deadline.capMs(budgetEnd - Date.now());
        if (left <= 0) {
          return execution.suspend({ reason: { kind: 'child', childRunId: this.runId, step: this.step }, name: this.runId, wakeAt: null });
        }
        await wakes.next(left);
      }
      if (!execution.isActive) return never();
      await refreshChildren(execution, this.runId);
      refreshed = true;
    }
  }
}

function childOutcome(child: StoredChild): StoredStep {
  if (child.status === 'completed') return { outcome: 'ok', result: child.output, error: null };
  const childError = child.error ?? { name: 'Error', message: `child ${child.status}` };
  const error = new ChildWorkflowFailedError(child.id, child.status as 'failed' | 'cancelled', childError);
  return {
    outcome: 'error',
    result: null,
    error: { name: error.name, message: error.message, childRunId: child.id, childStatus: child.status, childError } as never,
  };
}

/** The next read of an execution's awaited children: the ids gathered until it is sent, and its promise. */
interface Refresh {
  ids: Set<string>;
  done: Promise<void>;
}

const refreshing = new WeakMap<Execution, Refresh>();

/**
 * Reads whether `childId` has ended. The handles awaiting at one moment (a wake, an `all`) share one
 * read of just the children they await, sent a microtask later; it returns only the ended ones, so a
 * fan-in of n children reads each child's row about once, not once per sibling's end.
 */
function refreshChildren(execution: Execution, childId: string): Promise<void> {
  let refresh = refreshing.get(execution);
  if (!refresh) {
    const ids = new Set<string>();
    const done = Promise.resolve().then(async () => {
      refreshing.delete(execution); // handles arriving from now on need a read of their own
      for (const child of await execution.deps.journal.readChildren([...ids])) execution.journal.children.set(child.id, child);
    });
    refresh = { ids, done };
    refreshing.set(execution, refresh);
  }
  refresh.ids.add(childId);
  return refresh.done;
}
