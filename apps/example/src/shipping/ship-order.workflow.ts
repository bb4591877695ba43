import { DurableWorkflow, Workflow, WorkflowContext } from 'nestjs-durable';
import { ShippingService } from './shipping.service';

/** A child of every order's run: its parent parks until it ends, holding no worker. */
@Workflow('ship-order')
export class ShipOrder implements DurableWorkflow<{ orderId: string }, { trackingNumber: string; pickupAt: Date }> {
  constructor(private readonly shipping: ShippingService) {}

  async run({ orderId }: { orderId: string }, _ctx: WorkflowContext) {
    const { trackingNumber } = await this.shipping.createLabel(orderId);
    const { pickupAt } = await this.shipping.bookPickup(trackingNumber);
    return { trackingNumber, pickupAt };
  }
}
