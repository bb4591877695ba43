// What docs/guides/steps.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { WorkflowContext } from 'nestjs-durable';

export { Step, Workflow } from 'nestjs-durable';
export type { DurableWorkflow } from 'nestjs-durable';

export declare const ctx: WorkflowContext;
export declare const input: { orderId: string };

export declare class InventoryApi {
  sync(sku: string): Promise<void>;
}
export declare class PricingService {
  quote(orderId: string): Promise<{ totalCents: number }>;
}

interface Item {
  sku: string;
}
export declare class Catalog {
  find(sku: string): Promise<Item | undefined>;
}
export declare class Stock {
  reserve(item: Item): Promise<{ reservationId: string }>;
}
export declare class PaymentProvider {
  createCharge(charge: { amountCents: number; idempotencyKey: string }): Promise<{ paymentId: string }>;
}
