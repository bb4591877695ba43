import { ChildWorkflowFailedError, DeadlineExceededError, DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { config } from '../config';
import { PaymentsService } from '../payments/payments.service';
import { ParcelRefusedError } from '../shipping/parcel-refused.error';
import { ShipOrder } from '../shipping/ship-order.workflow';
import { APPROVAL_THRESHOLD_CENTS, CarrierEvents, DeliveryFeedback, ManagerApproval, ManagerRejection } from './order.contracts';
import { OrdersService } from './orders.service';

export interface FulfillOrderInput {
  orderId: string;
  amountCents: number;
}

export type FulfillOrderResult =
  | { orderId: string; outcome: 'closed'; paymentId: string; trackingNumber: string; rating: number | null }
  | { orderId: string; outcome: 'rejected' | 'approval-timed-out' | 'expired' | 'undeliverable'; refundId: string };

/** How far this execution has come: rebuilt on every execution, as the steps replay. */
interface Progress {
  paymentId?: string;
  trackingNumber?: string;
}

/**
 * An order from payment to feedback. Every side effect is a step, so the run can be interrupted
 * anywhere (crash, deploy, days of waiting) and picks up where it was without doing anything twice.
 * The whole order runs under a deadline (OrdersService starts it with `timeout`): past it, the call
 * the run awaits throws DeadlineExceededError. An order not yet handed to the carrier is refunded
 * within the grace; one already shipped is closed as it stands (the goods are on their way: no refund,
 * and no feedback any more). An order the carrier refuses to ship is refunded (outcome `undeliverable`).
 */
@Workflow('fulfill-order', {
  signals: [ManagerApproval, ManagerRejection, DeliveryFeedback],
  channels: [CarrierEvents],
  retry: { maxAttempts: 5, initialDelay: '2s', backoffFactor: 2, maxDelay: '1m' },
})
export class FulfillOrder implements DurableWorkflow<FulfillOrderInput, FulfillOrderResult> {
  constructor(
    private readonly payments: PaymentsService,
    private readonly orders: OrdersService,
  ) {}

  async run(input: FulfillOrderInput, ctx: WorkflowContext): Promise<FulfillOrderResult> {
    const progress: Progress = {};
    try {
      return await this.fulfil(input, ctx, progress);
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) throw error;
      // Cleanup inside the deadline's grace: steps still run (and once), so the refund is not lost.
      const { orderId } = input;
      if (progress.paymentId && progress.trackingNumber) {
        await this.orders.setStatus(orderId, 'closed');
        return { orderId, outcome: 'closed', paymentId: progress.paymentId, trackingNumber: progress.trackingNumber, rating: null };
      }
      const { refundId } = await this.payments.refund(orderId, input.amountCents);
      await this.orders.setStatus(orderId, 'expired');
      return { orderId, outcome: 'expired', refundId };
    }
  }

  private async fulfil({ orderId, amountCents }: FulfillOrderInput, ctx: WorkflowContext, progress: Progress): Promise<FulfillOrderResult> {
    const { paymentId } = await this.payments.charge(orderId, amountCents);
    progress.paymentId = paymentId;
    await this.orders.setStatus(orderId, 'charged');

    // Large orders wait for a manager (from the dashboard): approved, rejected, or a reminder first.
    if (amountCents >= APPROVAL_THRESHOLD_CENTS) {
      await this.orders.setStatus(orderId, 'awaiting-approval');
      const approve = ctx.signal(ManagerApproval);
      const reject = ctx.signal(ManagerRejection);
      let decision = await ctx.select('approval', { approve, reject, escalate: ctx.timer(config.approvalEscalation) });
      if (decision.key === 'escalate') {
        await this.orders.setStatus(orderId, 'escalated');
        decision = await ctx.select('escalated-approval', { approve, reject }, { deadline: config.approvalTimeout });
      }
      if (decision.key !== 'approve') {
        const { refundId } = await this.payments.refund(orderId, amountCents);
        await this.orders.setStatus(orderId, 'rejected');
        return { orderId, outcome: decision.key === 'reject' ? 'rejected' : 'approval-timed-out', refundId };
      }
    }

    await this.orders.setStatus(orderId, 'shipping');
    const shipment = await ctx.startChild(ShipOrder, { orderId, valueCents: amountCents }, { step: 'ship' });
    let trackingNumber: string;
    try {
      ({ trackingNumber } = await shipment.result());
    } catch (error) {
      // The carrier refused the parcel: the order cannot ship, and the customer gets the money back. A shipment that
      // failed otherwise (an outage past its retries, a bug) or was cancelled fails this run too, the money kept,
      // for an operator to retry (the shipment, then the order) or cancel.
      if (!(error instanceof ChildWorkflowFailedError && error.childError.name === ParcelRefusedError.name)) throw error;
      const { refundId } = await this.payments.refund(orderId, amountCents);
      await this.orders.setStatus(orderId, 'undeliverable');
      return { orderId, outcome: 'undeliverable', refundId };
    }
    progress.trackingNumber = trackingNumber;
    // The carrier knows its tracking number, not our order: a business key lets its webhook find this run.
    await ctx.setKeys({ trackingNumber });

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
