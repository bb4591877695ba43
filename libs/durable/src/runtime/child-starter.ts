import type { RegisteredWorkflow } from '../discovery/workflow.registry';

/** Starts a child run with a derived id; implemented by the run starter (runtime → worker without a cycle). */
export interface ChildStarter {
  startChild(args: { parentId: string; step: string; childId: string; workflow: RegisteredWorkflow; input: unknown }): Promise<void>;
}
