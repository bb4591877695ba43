import { Injectable, Logger } from '@nestjs/common';
import { SignalService, WorkflowClient } from 'nestjs-durable';
import { Restock, SyncInventory } from '../inventory/inventory.workflows';
import { CarrierEvents, orderRunId } from '../orders/order.contracts';
import { OrdersService } from '../orders/orders.service';

/**
 * The seeded runs that end in a warning or a failure on purpose, to fill the dashboard's failure views
 * (main.ts says so at every start: they keep retrying, and stay failed, across restarts).
 */
export const SEEDED_FAILURES = [
  'sync-inventory for SKU-1 (the inventory API answers 503: a WARN at each retry, an ERROR after the 6th attempt)',
  'sync-inventory for SKU-404 (an unknown SKU: an ERROR at once)',
];

/** Fills the dashboard for a first look: runs in every state an operator meets. */
@Injectable()
export class SeedService {
  private readonly logger = new Logger('Seed');

  constructor(
    private readonly orders: OrdersService,
    private readonly workflows: WorkflowClient,
    private readonly signals: SignalService,
  ) {}

  async seed(): Promise<void> {
    // Waiting for a signal: a large order needs a manager's approval (deliver it from the dashboard).
    await this.orders.place({ customer: 'Ada (needs approval)', amountCents: 125_000 });
    // Sleeping: delivered, in its delivery window before asking for feedback.
    const delivered = await this.orders.place({ customer: 'Grace (delivered)', amountCents: 4_900 });
    for (const [id, event] of [
      ['e1', 'picked-up'],
      ['e2', 'in-transit'],
      ['e3', 'delivered'],
    ] as const) {
      await this.signals.send(orderRunId(delivered.orderId), CarrierEvents, id, { event, at: new Date().toISOString() });
    }
    // Waiting on a channel: shipped, waiting for the carrier's events.
    await this.orders.place({ customer: 'Linus (in transit)', amountCents: 2_500 });
    // Waiting on children, which wait for signals.
    await this.workflows.start(Restock, { sku: 'SKU-7', suppliers: ['acme', 'globex'] });
    // Retrying with backoff, and failed for good: their WARN and ERROR lines are expected (see SEEDED_FAILURES).
    const flaky = await this.workflows.start(SyncInventory, { sku: 'SKU-1', mode: 'flaky' });
    const broken = await this.workflows.start(SyncInventory, { sku: 'SKU-404', mode: 'broken' });
    // Completed.
    await this.workflows.start(SyncInventory, { sku: 'SKU-2', mode: 'ok' });
    this.logger.log(
      `Seeded runs in every state: open the dashboard to see them. Failing on purpose: ${flaky.runId} (SKU-1), ${broken.runId} (SKU-404).`,
    );
  }
}
