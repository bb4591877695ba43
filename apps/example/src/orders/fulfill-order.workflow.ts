import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { config } from '../config';
import { PaymentsService } from '../payments/payments.service';
import { ShipOrder } from '../shipping/ship-order.workflow';
import { APPROVAL_THRESHOLD_CENTS, CarrierEvents, DeliveryFeedback, ManagerApproval } from './order.contracts';
import { OrdersService } from './orders.service';

export interface FulfillOrderInput {
  orderId: string;
  amountCents: number;
}

export type FulfillOrderResult =
  | { orderId: string; outcome: 'closed'; paymentId: string; trackingNumber: string; rating: number | null }
  | { orderId: string; outcome: 'rejected' | 'approval-timed-out'; refundId: string };

/**
 * An order from payment to feedback. Every side effect is a step, so the run can be interrupted
 * anywhere (crash, deploy, days of waiting) and picks up where it was without doing anything twice.
 */
@Workflow('fulfill-order', {
  signals: [ManagerApproval, DeliveryFeedback],
  channels: [CarrierEvents],
  retry: { maxAttempts: 5, initialDelay: '2s', backoffFactor: 2, maxDelay: '1m' },
})
export class FulfillOrder implements DurableWorkflow<FulfillOrderInput, FulfillOrderResult> {
  constructor(
    private readonly payments: PaymentsService,
    private readonly orders: OrdersService,
  ) {}

  async run({ orderId, amountCents }: FulfillOrderInput, ctx: WorkflowContext): Promise<FulfillOrderResult> {
    const { paymentId } = await this.payments.charge(orderId, amountCents);
    await this.orders.setStatus(orderId, 'charged');

    // Large orders wait for a manager (from the dashboard), and give up after a deadline.
    if (amountCents >= APPROVAL_THRESHOLD_CENTS) {
      await this.orders.setStatus(orderId, 'awaiting-approval');
      const decision = await ctx.waitForSignal(ManagerApproval, { timeout: config.approvalTimeout });
      if (!decision.received || !decision.payload.approved) {
        const { refundId } = await this.payments.refund(orderId, amountCents);
        await this.orders.setStatus(orderId, 'rejected');
        return { orderId, outcome: decision.received ? 'rejected' : 'approval-timed-out', refundId };
      }
    }

    await this.orders.setStatus(orderId, 'shipping');
    const shipment = await ctx.startChild(ShipOrder, { orderId }, { step: 'ship' });
    const { trackingNumber } = await shipment.result();

    // The carrier's events arrive by webhook, in order, each handled once, until 'delivered'.
    await ctx.consume(CarrierEvents, (message) => this.orders.recordTracking(orderId, message.key, message.payload), {
      until: (message) => message.payload.event === 'delivered',
    });

    await ctx.sleep('delivery-window', config.deliveryWindow);
    const feedback = await ctx.waitForSignal(DeliveryFeedback, { timeout: config.feedbackTimeout });
    await this.orders.setStatus(orderId, 'closed');
    return { orderId, outcome: 'closed', paymentId, trackingNumber, rating: feedback.received ? feedback.payload.rating : null };
  }
}
