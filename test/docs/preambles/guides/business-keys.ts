// What docs/guides/business-keys.md's blocks use without declaring it (see scripts/doc-snippets.mjs):
// the example app's order contracts, which the guide links to.
import { z } from 'zod';
import { defineChannel, defineSignal, type ChildHandle, type DurableWorkflow, type WorkflowContext } from 'nestjs-durable';
import type { SignalService, WorkflowClient } from 'nestjs-durable';

export { Body, Controller, Post } from '@nestjs/common';
export { SignalService, WorkflowClient } from 'nestjs-durable';

export interface Order {
  orderId: string;
}
export declare class FulfillOrder implements DurableWorkflow<Order, string> {
  run(input: Order, ctx: WorkflowContext): Promise<string>;
}
export const ManagerApproval = defineSignal('manager-approval', z.object({ approver: z.string().min(1), note: z.string().optional() }));
export const DeliveryFeedback = defineSignal('delivery-feedback', z.object({ rating: z.number().int().min(1).max(5) }));
const CarrierEvent = z.object({ event: z.enum(['picked-up', 'in-transit', 'out-for-delivery', 'delivered']), at: z.string() });
export type CarrierEvent = z.infer<typeof CarrierEvent>;
export const CarrierEvents = defineChannel('carrier-events', CarrierEvent);

export declare const workflows: WorkflowClient;
export declare const signals: SignalService;
export declare const ctx: WorkflowContext;
export declare const input: Order;
export declare const orderId: string;
export declare const trackingNumber: string;
export declare const shipment: ChildHandle<{ trackingNumber: string }>;
