// What docs/guides/versioning.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import { defineSignal, type WorkflowClient, type WorkflowContext } from 'nestjs-durable';

export { z } from 'zod';
export { Workflow } from 'nestjs-durable';
export type { DurableWorkflow, WorkflowContext } from 'nestjs-durable';

export declare const ctx: WorkflowContext;
export declare const input: { orderId: string; lines: Array<{ sku: string; quantity: number }> };
export const Go = defineSignal('go');
export declare const workflows: WorkflowClient;
export declare const runId: string;

export declare class StockService {
  reserve(sku: string, quantity: number): Promise<void>;
}
export declare class FraudService {
  check(orderId: string): Promise<{ score: number }>;
}
export declare class PaymentsService {
  charge(orderId: string): Promise<void>;
}
export declare class PricingService {
  quote(orderId: string): Promise<{ totalCents: number }>;
}
