import { EntitySchema } from 'typeorm';

/** A row of `signals`: the first payload delivered for a (run, name). */
export interface SignalRow {
  runId: string;
  /** The UTC day its run was created: the partition it is in. */
  runDay: string;
  name: string;
  payload: string | null;
  deliveredAt: Date;
  source: string | null;
}

export const signalEntity = (schema: string) =>
  new EntitySchema<SignalRow>({
    name: 'DurableSignal',
    tableName: 'signals',
    schema,
    columns: {
      runId: { name: 'run_id', type: 'text', primary: true },
      name: { type: 'text', primary: true },
      runDay: { name: 'run_day', type: 'date', primary: true },
      payload: { type: 'text', nullable: true },
      deliveredAt: { name: 'delivered_at', type: 'timestamptz', default: () => 'now()' },
      source: { type: 'text', nullable: true },
    },
  });
