import { EntitySchema } from 'typeorm';
import type { WaitKind } from '../../wait-kinds/wait-kind.registry';
import { waitKindCheck } from '../sql/wait-kinds.sql';

/** A row of `runs`: one workflow run, its status, its wait and its lease. */
export interface RunRow {
  id: string;
  seq: string;
  workflow: string;
  status: string;
  input: string | null;
  output: string | null;
  error: { name: string; message: string } | null;
  wait: Record<string, unknown> | null;
  waitKind: WaitKind | null;
  waitName: string | null;
  wakeAt: Date | null;
  attempt: number;
  /** Failed executions before the last operator retry: the retry budget counts from there. */
  attemptBase: number;
  leaseOwner: string | null;
  leaseToken: string;
  wakeSeq: string;
  parentId: string | null;
  parentStep: string | null;
  /** The W3C trace context of whoever started the run. */
  traceContext: string | null;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export const runEntity = (schema: string) =>
  new EntitySchema<RunRow>({
    name: 'DurableRun',
    tableName: 'runs',
    schema,
    columns: {
      id: { type: 'text', primary: true },
      seq: { type: 'bigint', generated: 'increment' },
      workflow: { type: 'text' },
      status: { type: 'text' },
      input: { type: 'text', nullable: true },
      output: { type: 'text', nullable: true },
      error: { type: 'jsonb', nullable: true },
      wait: { type: 'jsonb', nullable: true },
      waitKind: { name: 'wait_kind', type: 'text', nullable: true },
      waitName: { name: 'wait_name', type: 'text', nullable: true },
      wakeAt: { name: 'wake_at', type: 'timestamptz', nullable: true },
      attempt: { type: 'integer', default: 1 },
      attemptBase: { name: 'attempt_base', type: 'integer', default: 0 },
      leaseOwner: { name: 'lease_owner', type: 'text', nullable: true },
      leaseToken: { name: 'lease_token', type: 'bigint', default: 0 },
      wakeSeq: { name: 'wake_seq', type: 'bigint', default: 0 },
      parentId: { name: 'parent_id', type: 'text', nullable: true },
      parentStep: { name: 'parent_step', type: 'text', nullable: true },
      traceContext: { name: 'trace_context', type: 'text', nullable: true },
      createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
      updatedAt: { name: 'updated_at', type: 'timestamptz', default: () => 'now()' },
      finishedAt: { name: 'finished_at', type: 'timestamptz', nullable: true },
    },
    uniques: [{ name: 'runs_seq_key', columns: ['seq'] }],
    checks: [
      { name: 'runs_status_check', expression: `status IN ('pending','running','waiting','completed','failed','cancelled')` },
      { name: 'runs_wait_kind_check', expression: waitKindCheck() },
    ],
    indices: [
      { name: 'runs_due_idx', columns: ['wakeAt'], where: 'wake_at IS NOT NULL' },
      { name: 'runs_status_idx', columns: ['status', 'seq'] },
      { name: 'runs_workflow_idx', columns: ['workflow', 'seq'] },
      { name: 'runs_waiting_idx', columns: ['waitKind', 'waitName'], where: `status = 'waiting'` },
      { name: 'runs_parent_idx', columns: ['parentId'], where: 'parent_id IS NOT NULL' },
      { name: 'runs_finished_idx', columns: ['finishedAt'], where: 'finished_at IS NOT NULL' },
      // On an expression (wait_since(wait)), which entity metadata cannot describe: the migration owns it.
      { name: 'runs_waiting_since_idx', columns: ['wait'], where: `status = 'waiting'`, synchronize: false },
    ],
  });
