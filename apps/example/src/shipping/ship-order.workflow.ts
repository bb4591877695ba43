import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { ShippingService } from './shipping.service';

/**
 * A child of every order's run: its parent parks until it ends, holding no worker. It calls the
 * carrier's API, so it waits in the `carrier` queue for one of the account's slots: a burst of orders
 * queues here instead of failing at the carrier.
 */
@Workflow('ship-order', { queue: 'carrier' })
export class ShipOrder implements DurableWorkflow<{ orderId: string }, { trackingNumber: string; pickupAt: Date }> {
  constructor(private readonly shipping: ShippingService) {}

  async run({ orderId }: { orderId: string }, _ctx: WorkflowContext) {
    const { trackingNumber } = await this.shipping.createLabel(orderId);
    const { pickupAt } = await this.shipping.bookPickup(trackingNumber);
    return { trackingNumber, pickupAt };
  }
}
