// What docs/guides/run-deadlines.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { WorkflowClient, WorkflowContext } from 'nestjs-durable';

export interface Order {
  orderId: string;
}
export declare const order: Order;
export declare const workflows: WorkflowClient;

/** The members of the guide's FulfillOrder that it does not show. */
export declare class FulfillOrderParts {
  payments: { refund(orderId: string): Promise<void> };
  fulfil(input: Order, ctx: WorkflowContext): Promise<{ outcome: 'delivered' }>;
}
