import type { RegisteredWorkflow } from './workflow.registry';

/**
 * Starts a child run with a derived id. The runtime declares what it needs; the run starter
 * (client/, above the worker whose slots it uses) implements it, and the module binds it to the
 * CHILD_STARTER token.
 */
export interface ChildStarter {
  startChild(args: { parentId: string; step: string; childId: string; workflow: RegisteredWorkflow; input: unknown }): Promise<void>;
}
