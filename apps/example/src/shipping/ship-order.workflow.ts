import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { ShippingService } from './shipping.service';

export interface ShipOrderInput {
  orderId: string;
  /** What the parcel is worth, for the carrier's insurance. */
  valueCents: number;
}

/**
 * A child of every order's run: its parent parks until it ends, holding no worker. It calls the
 * carrier's API, so it waits in the `carrier` queue for one of the account's slots: a burst of orders
 * queues here instead of failing at the carrier.
 */
@Workflow('ship-order', { queue: 'carrier' })
export class ShipOrder implements DurableWorkflow<ShipOrderInput, { trackingNumber: string; pickupAt: Date }> {
  constructor(private readonly shipping: ShippingService) {}

  async run({ orderId, valueCents }: ShipOrderInput, _ctx: WorkflowContext) {
    const { trackingNumber } = await this.shipping.createLabel(orderId, valueCents);
    const { pickupAt } = await this.shipping.bookPickup(trackingNumber);
    return { trackingNumber, pickupAt };
  }
}
