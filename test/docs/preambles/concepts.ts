// What docs/concepts.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import { defineSignal, type WorkflowContext } from 'nestjs-durable';

export { Step } from 'nestjs-durable';

export declare const ctx: WorkflowContext;
export declare const input: { orderId: string };
export const Approval = defineSignal<{ approver: string }>('approval');

export declare class OrdersService {
  approve(approval: { approver: string }): Promise<void>;
}
export declare class LockService {
  release(orderId: string): Promise<void>;
}
export declare class PaymentProvider {
  createCharge(charge: { amountCents: number; idempotencyKey: string }): Promise<{ paymentId: string }>;
}
