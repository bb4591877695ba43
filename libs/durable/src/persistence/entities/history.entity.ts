import { EntitySchema } from 'typeorm';

/** A row of `history`: one transition of a run, with who caused it. */
export interface HistoryRow {
  id: string;
  runId: string;
  /** The UTC day its run was created: the partition it is in. */
  runDay: string;
  at: Date;
  event: string;
  actor: string;
  detail: Record<string, unknown> | null;
}

export const historyEntity = (schema: string) =>
  new EntitySchema<HistoryRow>({
    name: 'DurableHistory',
    tableName: 'history',
    schema,
    columns: {
      id: { type: 'bigint', primary: true, generated: 'increment' },
      runId: { name: 'run_id', type: 'text' },
      runDay: { name: 'run_day', type: 'date', primary: true },
      at: { type: 'timestamptz', default: () => 'now()' },
      event: { type: 'text' },
      actor: { type: 'text' },
      detail: { type: 'jsonb', nullable: true },
    },
    indices: [
      { name: 'history_run_idx', columns: ['runId', 'id'] },
      // BRIN, which entity metadata cannot describe: the migration owns it.
      { name: 'history_at_brin', columns: ['at'], synchronize: false },
    ],
  });
