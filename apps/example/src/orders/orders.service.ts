import { ConflictException, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Step, WorkflowClient } from 'nestjs-durable';
import { Payment } from '../payments/payment.entity';
import { Order, OrderStatus } from './order.entity';
import { orderRunId } from './order.contracts';
import { FulfillOrder } from './fulfill-order.workflow';
import { config } from '../config';

export interface PlaceOrder {
  customer: string;
  amountCents: number;
}

@Injectable()
export class OrdersService {
  constructor(
    private readonly db: DataSource,
    private readonly workflows: WorkflowClient,
  ) {}

  /**
   * The order row and the run that fulfils it commit together, or neither does. With an idempotency
   * key (the client's `Idempotency-Key` header) the order's id is drawn from it, so a client that
   * retries a request whose answer it lost gets the same order back, not a second order and a second
   * charge; the same key for a different order is refused (ConflictException).
   */
  async place(order: PlaceOrder, idempotencyKey?: string): Promise<{ orderId: string; runId: string }> {
    const orderId = (idempotencyKey === undefined ? randomUUID() : createHash('sha256').update(idempotencyKey).digest('hex'))
      .replaceAll('-', '')
      .slice(0, 16);
    return this.db.transaction(async (manager) => {
      const inserted = await manager
        .createQueryBuilder()
        .insert()
        .into(Order)
        .values({ id: orderId, customer: order.customer, amountCents: order.amountCents, status: 'placed' })
        .orIgnore()
        .returning('id')
        .execute();
      if (!(inserted.raw as unknown[]).length) {
        // Placed before under this key (or by a request racing this one, committed first: the insert waited for it).
        const placed = await manager.findOneByOrFail(Order, { id: orderId });
        if (placed.customer !== order.customer || placed.amountCents !== order.amountCents)
          throw new ConflictException(`The Idempotency-Key was used for another order (${orderId}); use a new key for a new order.`);
        return { orderId, runId: orderRunId(orderId) };
      }
      const run = await this.workflows.start(
        FulfillOrder,
        { orderId, amountCents: order.amountCents },
        // The whole order has a deadline: past it, the run refunds (see FulfillOrder).
        { runId: orderRunId(orderId), manager, timeout: config.orderTimeout, keys: { orderId, customer: order.customer } },
      );
      return { orderId, runId: run.runId };
    });
  }

  find(orderId: string): Promise<Order | null> {
    return this.db.getRepository(Order).findOneBy({ id: orderId });
  }

  /** What the payment provider recorded for the order: one charge, however the run was interrupted. */
  payments(orderId: string): Promise<Payment[]> {
    return this.db.getRepository(Payment).find({ where: { orderId }, order: { createdAt: 'ASC' } });
  }

  /** Orders placed before `placedBefore`, still open, with no charge in the payment ledger. */
  @Step('find-unpaid')
  async findUnpaid(placedBefore: Date): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.db.query(
      `SELECT o.id FROM orders o
        WHERE o.created_at < $1 AND o.status NOT IN ('rejected', 'closed', 'unpaid', 'expired', 'undeliverable')
          AND NOT EXISTS (SELECT 1 FROM payments p WHERE p.order_id = o.id AND p.kind = 'charge')
        ORDER BY o.created_at`,
      [placedBefore],
    );
    return rows.map((row) => row.id);
  }

  /** One step for the whole batch: `set-status` is keyed by status, so it records one order per run. */
  @Step('mark-unpaid')
  async markUnpaid(orderIds: string[]): Promise<void> {
    await this.db.query(`UPDATE orders SET status = 'unpaid' WHERE id = ANY($1)`, [orderIds]);
  }

  @Step('set-status', { key: (_orderId: string, status: OrderStatus) => status })
  async setStatus(orderId: string, status: OrderStatus): Promise<void> {
    await this.db.getRepository(Order).update({ id: orderId }, { status });
  }

  /**
   * Keyed by the carrier's event id: each tracking event is recorded once, however often it is delivered.
   * The append itself is idempotent too, for the one window a checkpoint cannot cover (a crash between
   * this update's commit and the step's checkpoint).
   */
  @Step('record-tracking', { key: (_orderId: string, eventId: string) => eventId })
  async recordTracking(orderId: string, eventId: string, event: { event: string; at: string }): Promise<void> {
    await this.db.query(
      `UPDATE orders SET tracking = CASE WHEN tracking @> $4::jsonb THEN tracking ELSE tracking || $2::jsonb END, status = $3 WHERE id = $1`,
      [
        orderId,
        JSON.stringify([{ id: eventId, ...event }]),
        event.event === 'delivered' ? 'delivered' : 'in-transit',
        JSON.stringify([{ id: eventId }]),
      ],
    );
  }
}
