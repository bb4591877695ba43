import type { ErrorInfo } from '../../errors/error-info';
import { EntitySchema } from 'typeorm';
import type { WaitKind } from '../../wait-kinds/wait-kind.registry';
import { waitKindCheck } from '../sql/wait-kinds.sql';
import { PLAIN_CLAIMABLE } from '../sql/claim-runs.sql';
import { unbegunWithDeadlineSql } from '../sql/expire-unbegun.sql';
import { begunPendingWithDeadlineSql } from '../sql/expire-pending-past-grace.sql';

/** A row of `runs`: one workflow run, its status, its wait and its lease. */
export interface RunRow {
  id: string;
  seq: string;
  workflow: string;
  status: string;
  input: string | null;
  output: string | null;
  error: ErrorInfo | null;
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
  /** The trace context of whoever started the run, as the registered propagator wrote it. */
  traceContext: string | null;
  createdAt: Date;
  /** The UTC day it was created: its journal's partition (1970-01-01 for a run from before the journal was partitioned). */
  runDay: string;
  updatedAt: Date;
  finishedAt: Date | null;
  /** Flow control (see the queues migration): the queue, the place in it, dedup and debounce, the first execution. */
  queue: string | null;
  partitionKey: string | null;
  priority: number;
  deduplicationId: string | null;
  debounceKey: string | null;
  debounceUntil: Date | null;
  beganAt: Date | null;
  /** Run deadlines (see that migration): the instant to end by, a timeout counted from the first execution, a detached child. */
  deadline: Date | null;
  timeoutMs: string | null;
  detached: boolean;
  /** Business keys (see that migration): what the run is about, by name. */
  keys: Record<string, string> | null;
  /** Fork and versions (see that migration). */
  forkedFrom: string | null;
  appVersion: string | null;
  warning: Record<string, unknown> | null;
  /** How its checkpoint keys spell names (see that migration). */
  keyFormat: number;
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
      // As Postgres lists the migration's default once TypeORM has stripped its casts (so the schema check agrees).
      runDay: { name: 'run_day', type: 'date', default: () => `(timezone('UTC', now()))` },
      updatedAt: { name: 'updated_at', type: 'timestamptz', default: () => 'now()' },
      finishedAt: { name: 'finished_at', type: 'timestamptz', nullable: true },
      queue: { type: 'text', nullable: true },
      partitionKey: { name: 'partition_key', type: 'text', nullable: true },
      priority: { type: 'integer', default: 100 },
      deduplicationId: { name: 'deduplication_id', type: 'text', nullable: true },
      debounceKey: { name: 'debounce_key', type: 'text', nullable: true },
      debounceUntil: { name: 'debounce_until', type: 'timestamptz', nullable: true },
      beganAt: { name: 'began_at', type: 'timestamptz', nullable: true },
      deadline: { type: 'timestamptz', nullable: true },
      timeoutMs: { name: 'timeout_ms', type: 'bigint', nullable: true },
      detached: { type: 'boolean', default: false },
      keys: { type: 'jsonb', nullable: true },
      forkedFrom: { name: 'forked_from', type: 'text', nullable: true },
      appVersion: { name: 'app_version', type: 'text', nullable: true },
      warning: { type: 'jsonb', nullable: true },
      keyFormat: { name: 'key_format', type: 'smallint', default: 1 },
    },
    uniques: [{ name: 'runs_seq_key', columns: ['seq'] }],
    checks: [
      { name: 'runs_status_check', expression: `status IN ('pending','running','waiting','completed','failed','cancelled')` },
      { name: 'runs_wait_kind_check', expression: waitKindCheck() },
      { name: 'runs_priority_check', expression: 'priority BETWEEN 0 AND 1000' },
    ],
    indices: [
      // What the plain claim reads: a queue's pending and waiting runs are admitted from the queue's own indexes.
      { name: 'runs_due_idx', columns: ['wakeAt'], where: PLAIN_CLAIMABLE },
      { name: 'runs_queue_running_idx', columns: ['queue', 'partitionKey'], where: `status = 'running' AND queue IS NOT NULL` },
      { name: 'runs_queue_pending_idx', columns: ['queue', 'priority', 'wakeAt'], where: `status = 'pending' AND queue IS NOT NULL` },
      {
        name: 'runs_queue_partition_idx',
        columns: ['queue', 'partitionKey', 'priority', 'wakeAt'],
        // The runs with no key too (under a null key): admission reads them by their own range (migration 19).
        where: `status = 'pending' AND queue IS NOT NULL`,
      },
      { name: 'runs_queue_waking_idx', columns: ['wakeAt'], where: `status = 'waiting' AND queue IS NOT NULL AND wake_at IS NOT NULL` },
      { name: 'runs_queue_began_idx', columns: ['queue', 'beganAt'], where: 'queue IS NOT NULL AND began_at IS NOT NULL' },
      // What the sweeper fails once their deadline passed (migration 23).
      { name: 'runs_unbegun_deadline_idx', columns: ['deadline'], where: unbegunWithDeadlineSql() },
      // What the sweeper fails once their grace ended while they waited for a slot or a worker (migration 25).
      { name: 'runs_begun_pending_deadline_idx', columns: ['deadline'], where: begunPendingWithDeadlineSql() },
      {
        name: 'runs_deduplication_key',
        columns: ['queue', 'deduplicationId'],
        unique: true,
        where: `deduplication_id IS NOT NULL AND status IN ('pending','running','waiting')`,
      },
      {
        name: 'runs_debounce_key',
        columns: ['workflow', 'debounceKey'],
        unique: true,
        where: `debounce_key IS NOT NULL AND began_at IS NULL AND status IN ('pending','waiting')`,
      },
      { name: 'runs_workflow_idx', columns: ['workflow', 'seq'] },
      { name: 'runs_waiting_idx', columns: ['waitKind', 'waitName'], where: `status = 'waiting'` },
      { name: 'runs_parent_idx', columns: ['parentId'], where: 'parent_id IS NOT NULL' },
      { name: 'runs_forked_from_idx', columns: ['forkedFrom'], where: 'forked_from IS NOT NULL' },
      { name: 'runs_completed_idx', columns: ['finishedAt'], where: `status = 'completed'` },
      { name: 'runs_failed_idx', columns: ['finishedAt'], where: `status = 'failed'` },
      { name: 'runs_cancelled_idx', columns: ['finishedAt'], where: `status = 'cancelled'` },
      { name: 'runs_day_idx', columns: ['runDay'] },
      // On an expression (wait_since(wait)), which entity metadata cannot describe: the migration owns it.
      { name: 'runs_waiting_since_idx', columns: ['wait'], where: `lower(status) = 'waiting'`, synchronize: false },
      // GIN with the jsonb_path_ops operator class, which entity metadata cannot describe: the migration owns it.
      { name: 'runs_keys_idx', columns: ['keys'], where: 'keys IS NOT NULL', synchronize: false },
      // On an expression (listedStatus), which entity metadata cannot describe: the migration owns it.
      { name: 'runs_listed_status_idx', columns: ['status', 'seq'], synchronize: false },
      // BRIN, which entity metadata cannot describe: the migration owns them.
      { name: 'runs_created_brin', columns: ['createdAt'], synchronize: false },
      { name: 'runs_updated_brin', columns: ['updatedAt'], synchronize: false },
    ],
  });
