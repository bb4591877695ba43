// What docs/guides/delayed-start.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { DurableWorkflow, WorkflowClient } from 'nestjs-durable';

export declare const workflows: WorkflowClient;
export declare const userId: string;
export declare const orderId: string;
export declare const trial: { endsAt: Date };

export declare class SendTrialEnded implements DurableWorkflow<{ userId: string }, void> {
  run(input: { userId: string }): Promise<void>;
}
export declare class Remind implements DurableWorkflow<{ orderId: string }, void> {
  run(input: { orderId: string }): Promise<void>;
}
