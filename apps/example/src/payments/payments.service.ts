import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Step } from 'nestjs-durable';
import { Payment } from './payment.entity';

/**
 * Talks to the payment provider. Its methods are steps: inside a run they are checkpointed, so a
 * replay never charges twice; the idempotency key covers the one window a checkpoint cannot (a crash
 * between the provider's answer and the checkpoint's commit).
 */
@Injectable()
export class PaymentsService {
  private readonly logger = new Logger(PaymentsService.name);

  constructor(private readonly db: DataSource) {}

  @Step('charge')
  async charge(orderId: string, amountCents: number): Promise<{ paymentId: string; chargedAt: Date }> {
    const paymentId = `charge:${orderId}`;
    await this.db
      .createQueryBuilder()
      .insert()
      .into(Payment)
      .values({ idempotencyKey: paymentId, orderId, kind: 'charge', amountCents })
      .orIgnore()
      .execute();
    this.logger.log(`Charged ${(amountCents / 100).toFixed(2)} for order ${orderId}`);
    return { paymentId, chargedAt: new Date() };
  }

  @Step('refund')
  async refund(orderId: string, amountCents: number): Promise<{ refundId: string }> {
    const refundId = `refund:${orderId}`;
    await this.db
      .createQueryBuilder()
      .insert()
      .into(Payment)
      .values({ idempotencyKey: refundId, orderId, kind: 'refund', amountCents })
      .orIgnore()
      .execute();
    this.logger.log(`Refunded order ${orderId}`);
    return { refundId };
  }
}
