// What docs/guides/transactions.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { DurableWorkflow } from 'nestjs-durable';

export declare class DatabaseModule {}
export declare class OrdersModule {}

/** The app's order entity. */
export declare class Order {
  id: string;
  customer: string;
  amountCents: number;
  status: 'placed' | 'paid' | 'shipped';
}
export declare class FulfillOrder implements DurableWorkflow<{ orderId: string; amountCents: number }, string> {
  run(input: { orderId: string; amountCents: number }): Promise<string>;
}
