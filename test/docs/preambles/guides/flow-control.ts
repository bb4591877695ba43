// What docs/guides/flow-control.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { DurableWorkflow, WorkflowClient } from 'nestjs-durable';

export { DurableModule, Workflow } from 'nestjs-durable';
export type { DurableWorkflow } from 'nestjs-durable';

export declare const workflows: WorkflowClient;
export declare const runId: string;
export declare const tenantId: string;
export declare const documentId: string;
export declare const tenant: { vip: boolean };
export declare const orderId: string;
export declare const userId: string;
export declare const fields: string[];

export declare class LlmService {
  summarize(documentId: string): Promise<string>;
}
export declare class ChargeOrder implements DurableWorkflow<{ orderId: string }, void> {
  run(input: { orderId: string }): Promise<void>;
}
export declare class ReindexUser implements DurableWorkflow<{ userId: string; fields: string[] }, void> {
  run(input: { userId: string; fields: string[] }): Promise<void>;
}
