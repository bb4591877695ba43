import { EntitySchema } from 'typeorm';

/** A row of `messages`: one channel message, deduplicated by key, ordered by seq, consumed by ack. */
export interface MessageRow {
  runId: string;
  /** The UTC day its run was created: the partition it is in. */
  runDay: string;
  channel: string;
  key: string;
  seq: string;
  payload: string | null;
  sentAt: Date;
  ackedAt: Date | null;
  source: string | null;
}

export const messageEntity = (schema: string) =>
  new EntitySchema<MessageRow>({
    name: 'DurableMessage',
    tableName: 'messages',
    schema,
    columns: {
      runId: { name: 'run_id', type: 'text', primary: true },
      channel: { type: 'text', primary: true },
      key: { type: 'text', primary: true },
      runDay: { name: 'run_day', type: 'date', primary: true },
      seq: { type: 'bigint' },
      payload: { type: 'text', nullable: true },
      sentAt: { name: 'sent_at', type: 'timestamptz', default: () => 'now()' },
      ackedAt: { name: 'acked_at', type: 'timestamptz', nullable: true },
      source: { type: 'text', nullable: true },
    },
    uniques: [{ name: 'messages_run_id_channel_seq_key', columns: ['runId', 'channel', 'seq', 'runDay'] }],
  });
