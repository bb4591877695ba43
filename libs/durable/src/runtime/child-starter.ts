import type { QueuePlacementOptions } from '../interfaces';
import type { RegisteredWorkflow } from './workflow.registry';

/**
 * Starts a child run with a derived id. The runtime declares what it needs; the run starter
 * (client/, above the worker whose slots it uses) implements it, and the module binds it to the
 * CHILD_STARTER token.
 */
export interface ChildStarter {
  /**
   * Inserts the child (or finds it inserted) while the parent holds `parentToken`, in one statement;
   * false when the parent's lease is gone (taken over, or cancelled): nothing was inserted.
   */
  startChild(args: ChildStartArgs): Promise<boolean>;
}

/** A child to insert: its parent's lease, its memoizing step and derived id, and how it runs. */
export interface ChildStartArgs {
  parentId: string;
  parentToken: string;
  step: string;
  childId: string;
  workflow: RegisteredWorkflow;
  input: unknown;
  /** Keeps its own deadline only, and is not cancelled with the parent. */
  detached: boolean;
  /** Its place in its queue (ChildStartOptions). */
  queueing: QueuePlacementOptions;
}
