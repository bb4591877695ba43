import type { ErrorInfo } from '../../errors/error-info';
import { EntitySchema } from 'typeorm';

/** A row of `steps`: one checkpoint of a run (a step's outcome, a sleep's instant, a child spawn…). */
export interface StepRow {
  runId: string;
  /** The UTC day its run was created: the partition it is in. */
  runDay: string;
  key: string;
  kind: string;
  outcome: 'ok' | 'error';
  result: string | null;
  error: ErrorInfo | null;
  startedAt: Date | null;
  finishedAt: Date;
}

export const stepEntity = (schema: string) =>
  new EntitySchema<StepRow>({
    name: 'DurableStep',
    tableName: 'steps',
    schema,
    columns: {
      runId: { name: 'run_id', type: 'text', primary: true },
      key: { type: 'text', primary: true },
      runDay: { name: 'run_day', type: 'date', primary: true },
      kind: { type: 'text' },
      outcome: { type: 'text' },
      result: { type: 'text', nullable: true },
      error: { type: 'jsonb', nullable: true },
      startedAt: { name: 'started_at', type: 'timestamptz', nullable: true },
      finishedAt: { name: 'finished_at', type: 'timestamptz', default: () => 'now()' },
    },
    checks: [{ name: 'steps_outcome_check', expression: `outcome IN ('ok','error')` }],
  });
