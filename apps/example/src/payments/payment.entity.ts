import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** The payment provider's ledger (a stand-in): one row per idempotency key, as a real provider dedups. */
@Entity('payments')
export class Payment {
  @PrimaryColumn('text', { name: 'idempotency_key' }) idempotencyKey!: string;
  @Column('text', { name: 'order_id' }) orderId!: string;
  @Column('text') kind!: 'charge' | 'refund';
  @Column('integer', { name: 'amount_cents' }) amountCents!: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
