// What docs/guides/child-workflows.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { DurableWorkflow, WorkflowContext } from 'nestjs-durable';

export declare class ShippingService {
  createLabel(orderId: string): Promise<{ trackingNumber: string }>;
}

export interface PurchaseInput {
  orderId: string;
  sku: string;
  suppliers: string[];
}
export declare const input: PurchaseInput;
export declare const ctx: WorkflowContext;

export declare class RequestQuote implements DurableWorkflow<{ sku: string; supplier: string }, { priceCents: number }> {
  run(input: { sku: string; supplier: string }): Promise<{ priceCents: number }>;
}
export declare class ReserveStock implements DurableWorkflow<{ orderId: string; sku: string }, void> {
  run(input: { orderId: string; sku: string }): Promise<void>;
}

export declare class OrdersService {
  markOutOfStock(orderId: string, reason: string): Promise<void>;
}
