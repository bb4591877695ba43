import { z } from 'zod';
import { defineChannel, defineSignal } from 'nestjs-durable';

/**
 * The typed contracts of an order's run, shared by the workflow, the webhooks and the dashboard
 * (which shows each schema as the form for that signal).
 */
export const ManagerApproval = defineSignal('manager-approval', z.object({ approver: z.string().min(1), note: z.string().optional() }));

export const ManagerRejection = defineSignal('manager-rejection', z.object({ approver: z.string().min(1), reason: z.string().min(1) }));

export const DeliveryFeedback = defineSignal(
  'delivery-feedback',
  z.object({ rating: z.number().int().min(1).max(5), comment: z.string().max(2_000).optional() }),
);

export const CarrierEvents = defineChannel(
  'carrier-events',
  z.object({ event: z.enum(['picked-up', 'in-transit', 'out-for-delivery', 'delivered']), at: z.string() }),
);

/** Orders from this amount on need a manager's approval. */
export const APPROVAL_THRESHOLD_CENTS = 50_000;

export const orderRunId = (orderId: string) => `order-${orderId}`;
