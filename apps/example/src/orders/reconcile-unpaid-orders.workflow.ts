import { DurableWorkflow, ScheduledInput, Workflow } from 'nestjs-durable';
import { OrdersService } from './orders.service';

export interface ReconciliationReport {
  scheduledAt: Date;
  /** Orders placed before the cutoff that the payment ledger has no charge for. */
  unpaid: string[];
}

const GRACE_MS = 24 * 3_600_000;

/**
 * Every night at 02:00 in Paris, flags the orders still unpaid a day after they were placed (their
 * run failed or was cancelled before the charge). A durable schedule: one run per night however many
 * instances are up, at 02:00 Paris time across daylight saving, and a night the app was down is
 * recorded as missed rather than run late. Operators see it, pause it and backfill it in the
 * dashboard's Schedules page.
 */
@Workflow('reconcile-unpaid-orders', {
  schedules: [{ name: 'nightly-reconciliation', cron: '0 2 * * *', timezone: 'Europe/Paris' }],
})
export class ReconcileUnpaidOrders implements DurableWorkflow<ScheduledInput, ReconciliationReport> {
  constructor(private readonly orders: OrdersService) {}

  async run({ scheduledAt }: ScheduledInput): Promise<ReconciliationReport> {
    // Measured from the slot, not from now: a backfilled night looks at the orders of that night.
    const unpaid = await this.orders.findUnpaid(new Date(scheduledAt.getTime() - GRACE_MS));
    if (unpaid.length > 0) await this.orders.markUnpaid(unpaid);
    return { scheduledAt, unpaid };
  }
}
