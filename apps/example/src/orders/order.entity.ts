import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type OrderStatus =
  | 'placed'
  | 'charged'
  | 'awaiting-approval'
  | 'escalated'
  | 'shipping'
  | 'in-transit'
  | 'delivered'
  | 'closed'
  | 'rejected'
  | 'expired'
  | 'undeliverable'
  | 'unpaid';

@Entity('orders')
export class Order {
  @PrimaryColumn('text') id!: string;
  @Column('text') customer!: string;
  @Column('integer', { name: 'amount_cents' }) amountCents!: number;
  @Column('text') status!: OrderStatus;
  @Column('jsonb', { default: [] }) tracking!: Array<{ event: string; at: string }>;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt!: Date;
}
