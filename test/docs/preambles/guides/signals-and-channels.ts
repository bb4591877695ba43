// What docs/guides/signals-and-channels.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { ChildHandle, WorkflowContext } from 'nestjs-durable';

export declare const ctx: WorkflowContext;
export declare const shipmentHandle: ChildHandle<{ trackingNumber: string }>;
export declare const orderId: string;
export declare const body: { eventId: string; event: 'picked-up' | 'in-transit' | 'delivered'; at: string };

export declare class OrdersService {
  escalate(orderId: string): Promise<void>;
  record(orderId: string, decision: { approved: boolean; approver: string }): Promise<void>;
  ship(approver: string): Promise<string>;
  remind(): Promise<void>;
}
export declare class TrackingService {
  record(orderId: string, event: { event: string; at: string }): Promise<void>;
  close(orderId: string): Promise<void>;
}
