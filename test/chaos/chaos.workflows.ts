import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import {
  defineChannel,
  defineSignal,
  DURABLE_DATA_SOURCE,
  DurableWorkflow,
  NonRetryableError,
  Step,
  Workflow,
  WorkflowContext,
} from 'nestjs-durable';

/**
 * The chaos workflows use every primitive: steps (inline, @Step, and several at once), a child, a parked sleep, a
 * signal with a deadline, and a channel consumed receive → step → ack until a closing message.
 * Every step's side effect appends a ledger row (run, step key, pid, time) and returns that row's id,
 * so the checkpoint names the one effect that won and the checker can count every other one.
 */
export const Approval = defineSignal('approval', z.object({ by: z.string(), copy: z.number() }));
// `by` and `copy` name the planned copy whose payload was stored (checks/deliveries.ts): the schema keeps them.
export const Events = defineChannel('events', z.object({ n: z.number(), close: z.boolean().optional(), by: z.string(), copy: z.number() }));

export interface ChaosInput {
  /** Longer than inlineWaitMs, so the sleep parks. */
  napMs: number;
  signalTimeoutMs: number;
  /** A gate step fails the run (for good) until an operator has retried it. */
  gate?: boolean;
}

/** What every effect step returns and so what its checkpoint stores. */
export interface Effect {
  pid: number;
  ledgerId: number;
}

export const ledgerTable = (schema: string) => `"${schema}".chaos_ledger`;

export const ledgerDdl = (schema: string) => `
CREATE TABLE IF NOT EXISTS ${ledgerTable(schema)} (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL,
  step_key text NOT NULL,
  pid integer NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp(),
  detail jsonb
)`;

export const businessTable = (schema: string) => `"${schema}".chaos_business`;

/**
 * The application's own rows, written in the same transaction as a start or a signal made with
 * `{ manager }`: `start:<run>` or `signal:<run>:<sender>:<copy>`. A row here means that transaction
 * committed, so its durable record must exist; a rolled-back one leaves neither.
 */
export const businessDdl = (schema: string) => `
CREATE TABLE IF NOT EXISTS ${businessTable(schema)} (
  key text PRIMARY KEY,
  run_id text NOT NULL,
  at timestamptz NOT NULL DEFAULT clock_timestamp()
)`;

/** How long the slow steps wait between their effect and their return: the crash window, widened. */
export const WINDOW_MS = 250;

@Injectable()
export class Ledger {
  constructor(@Inject(DURABLE_DATA_SOURCE) private readonly db: DataSource) {}

  /**
   * Appends the effect. With `holdMs`, announces it on stdout ("effect {…}", which the harness may
   * answer with SIGKILL) and only then returns, after holdMs: the checkpoint comes that much later.
   * `stepKey` is the step's checkpoint key, which the checks look its effects up by: the workload's step
   * names hold no `%`, `:` or `#`, so each is its own key.
   */
  async effect(runId: string, stepKey: string, detail: object = {}, holdMs = 0): Promise<Effect> {
    const schema = (this.db.options as { schema?: string }).schema!;
    const [row] = await this.db.query(
      `INSERT INTO ${ledgerTable(schema)} (run_id, step_key, pid, detail) VALUES ($1, $2, $3, $4) RETURNING id`,
      [runId, stepKey, process.pid, JSON.stringify(detail)],
    );
    const effect = { pid: process.pid, ledgerId: Number(row.id) };
    if (holdMs > 0) {
      process.stdout.write(`effect ${JSON.stringify({ runId, stepKey, ...effect })}\n`);
      await new Promise((resolve) => setTimeout(resolve, holdMs));
    }
    return effect;
  }

  /** The retry gate: closed (a permanent failure of the step, so the run fails) until the run's history shows an operator retry. */
  async gate(runId: string): Promise<Effect> {
    const schema = (this.db.options as { schema?: string }).schema!;
    const [retried] = await this.db.query(`SELECT 1 FROM "${schema}".history WHERE run_id = $1 AND event = 'retried' LIMIT 1`, [runId]);
    if (!retried) throw new NonRetryableError('The gate is closed until an operator retries this run.');
    return this.effect(runId, 'gate');
  }
}

/** Transient database errors (killed connections, a restarting server) fail an attempt: retry soon and often. */
const RETRY = { maxAttempts: 200, initialDelay: '100ms', backoffFactor: 2, maxDelay: '1s' } as const;

/** The chaos app's queue of children (chaos.app.ts): every child waits in it for one of its few slots (checks/queues.ts). */
export const CHAOS_QUEUE = { name: 'chaos-children', concurrency: 2 };

/**
 * The queue some bursts of orders start in (plan.ts): the executing sender commits such starts that
 * come together in one batch that takes the queue's slots for them (group commit of queued starts).
 */
export const CHAOS_ORDER_QUEUE = { name: 'chaos-orders', concurrency: 8 };

/** Every queue of the chaos app, whose concurrency checks/queues.ts holds it to. */
export const CHAOS_QUEUES = [CHAOS_QUEUE, CHAOS_ORDER_QUEUE];

@Workflow('chaos-child', { retry: RETRY, queue: CHAOS_QUEUE.name })
export class ChaosChild implements DurableWorkflow<{ parent: string }, { packed: Effect; shipped: Effect }> {
  constructor(private readonly ledger: Ledger) {}

  async run(_input: { parent: string }, ctx: WorkflowContext) {
    const packed = await ctx.step('pack', () => this.ledger.effect(ctx.runId, 'pack', {}, WINDOW_MS));
    await ctx.step('label', () => this.ledger.effect(ctx.runId, 'label'));
    await ctx.sleep('settle', 150); // shorter than inlineWaitMs: waits in-process
    const shipped = await ctx.step('ship', () => this.ledger.effect(ctx.runId, 'ship'));
    return { packed, shipped };
  }
}

const NOTICES = ['buyer', 'seller', 'carrier'];

@Workflow('chaos-order', { retry: RETRY, signals: [Approval], channels: [Events] })
export class ChaosOrder implements DurableWorkflow<ChaosInput, unknown> {
  constructor(private readonly ledger: Ledger) {}

  async run(input: ChaosInput, ctx: WorkflowContext) {
    await ctx.step('reserve', () => this.ledger.effect(ctx.runId, 'reserve'));
    if (input.gate) await ctx.step('gate', () => this.ledger.gate(ctx.runId));
    await this.charge(ctx.runId);
    // A quick step right after a slow one: an execution that outlived its lease would reach it.
    await ctx.step('receipt', () => this.ledger.effect(ctx.runId, 'receipt'));
    // Three steps at once: their checkpoints meet in the group commit and go out as one batch, which the faults strike too.
    await Promise.all(NOTICES.map((notice) => ctx.step(`notify-${notice}`, () => this.ledger.effect(ctx.runId, `notify-${notice}`))));
    const child = await ctx.startChild(ChaosChild, { parent: ctx.runId }, { step: 'child' });
    const shipment = await child.result();
    await ctx.sleep('nap', input.napMs);
    await ctx.step('after-nap', () => this.ledger.effect(ctx.runId, 'after-nap'));
    const approval = await ctx.waitForSignal(Approval, { timeout: input.signalTimeoutMs });
    await ctx.step('apply-approval', () =>
      this.ledger.effect(
        ctx.runId,
        'apply-approval',
        approval.received ? { received: true, payload: approval.payload } : { received: false },
      ),
    );
    let handled = 0;
    for (;;) {
      const message = await ctx.receive(Events);
      if (message.payload.close) break; // not acked: a re-run meets it first and ends the loop again
      await ctx.step(`handle-${message.key}`, () =>
        this.ledger.effect(ctx.runId, `handle-${message.key}`, { seq: message.seq, n: message.payload.n }, 100),
      );
      await ctx.ack(Events, message.key);
      handled++;
    }
    await ctx.step('finish', () => this.ledger.effect(ctx.runId, 'finish'));
    return { shipment, approval: approval.received, handledThisExecution: handled };
  }

  @Step('charge')
  async charge(runId: string): Promise<Effect> {
    return this.ledger.effect(runId, 'charge', {}, WINDOW_MS);
  }
}
