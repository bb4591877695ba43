import { EntitySchema } from 'typeorm';

/** A row of `queue_slots`: one unit of a queue's concurrency, and the run executing in it (null: free). */
export interface QueueSlotRow {
  queue: string;
  slot: number;
  holder: string | null;
}

export const queueSlotEntity = (schema: string) =>
  new EntitySchema<QueueSlotRow>({
    name: 'DurableQueueSlot',
    tableName: 'queue_slots',
    schema,
    columns: {
      queue: { type: 'text', primary: true },
      slot: { type: 'integer', primary: true },
      holder: { type: 'text', nullable: true },
    },
    indices: [
      { name: 'queue_slots_free_idx', columns: ['queue', 'slot'], where: 'holder IS NULL' },
      { name: 'queue_slots_holder_idx', columns: ['holder'], where: 'holder IS NOT NULL' },
    ],
    checks: [{ name: 'queue_slots_slot_check', expression: 'slot >= 1' }],
  });
