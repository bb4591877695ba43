import type { RegisteredWorkflow } from '../discovery/workflow.registry';

/** Starts a child run with a derived id; implemented by the run starter (runtime → worker without a cycle). */
export interface ChildStarter {
  /**
   * Inserts the child (or finds it inserted) while the parent holds `parentToken`, in one statement;
   * false when the parent's lease is gone (taken over, or cancelled): nothing was inserted.
   */
  startChild(args: { parentId: string; parentToken: string; step: string; childId: string; workflow: RegisteredWorkflow; input: unknown }): Promise<boolean>;
}
