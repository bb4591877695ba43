import { Injectable, Logger } from '@nestjs/common';
import { defineSignal, DurableWorkflow, NonRetryableError, Step, Workflow, WorkflowContext } from 'nestjs-durable';
import { z } from 'zod';

/** A supplier's quote arrives from outside, some time later. */
export const SupplierQuote = defineSignal(
  'supplier-quote',
  z.object({ unitPriceCents: z.number().int().positive(), leadDays: z.number().int().min(0) }),
);

/** The inventory system (a stand-in) that is sometimes down. */
@Injectable()
export class InventoryApi {
  private readonly logger = new Logger(InventoryApi.name);

  @Step('sync-stock')
  async sync(sku: string, mode: 'ok' | 'flaky' | 'broken'): Promise<{ sku: string; onHand: number }> {
    if (mode === 'broken') throw new NonRetryableError(`SKU ${sku} does not exist in the inventory system`);
    if (mode === 'flaky') throw new Error('Inventory API unavailable (503)');
    this.logger.log(`Synced stock of ${sku}: 42 on hand`);
    return { sku, onHand: 42 };
  }
}

/**
 * Retries with backoff, parked between attempts: the dashboard shows "retry 2 of 6 at 14:02". Also
 * on a schedule every minute for one SKU, so `npm start` shows a schedule firing (and its runs
 * under Schedules in the dashboard).
 */
@Workflow('sync-inventory', {
  retry: { maxAttempts: 6, initialDelay: '30s', backoffFactor: 2, maxDelay: '10m' },
  schedules: [{ name: 'stock-sync-every-minute', cron: '* * * * *', input: { sku: 'SKU-2', mode: 'ok' } }],
})
export class SyncInventory implements DurableWorkflow<{ sku: string; mode: 'ok' | 'flaky' | 'broken' }, unknown> {
  constructor(private readonly inventory: InventoryApi) {}
  async run(input: { sku: string; mode: 'ok' | 'flaky' | 'broken' }, _ctx: WorkflowContext) {
    return this.inventory.sync(input.sku, input.mode);
  }
}

@Workflow('request-quote', { signals: [SupplierQuote] })
export class RequestQuote implements DurableWorkflow<{ sku: string; supplier: string }, unknown> {
  async run(input: { sku: string; supplier: string }, ctx: WorkflowContext) {
    const quote = await ctx.waitForSignal(SupplierQuote, { timeout: '3d' });
    return quote.received ? { supplier: input.supplier, ...quote.payload } : { supplier: input.supplier, declined: true };
  }
}

/** A parent waiting on children: it parks (reason "child") until each supplier's quote run ends. */
@Workflow('restock')
export class Restock implements DurableWorkflow<{ sku: string; suppliers: string[] }, unknown> {
  async run(input: { sku: string; suppliers: string[] }, ctx: WorkflowContext) {
    const quotes = [];
    for (const supplier of input.suppliers)
      quotes.push(await ctx.startChild(RequestQuote, { sku: input.sku, supplier }, { step: `quote-${supplier}` }));
    const answers = await ctx.all(quotes);
    return { sku: input.sku, answers };
  }
}
