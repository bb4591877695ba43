import { EntitySchema } from 'typeorm';

/** A row of `schedules`: a cron schedule, where its slots stand, and the operator's state. */
export interface ScheduleRow {
  name: string;
  workflow: string;
  source: 'decorator' | 'api';
  cron: string;
  timezone: string;
  overlap: string;
  catchupWindowMs: string;
  catchup: string;
  input: string;
  jitterMs: string;
  paused: boolean;
  workflowMissing: boolean;
  lastSlot: Date;
  nextFireAt: Date | null;
  bufferedSlot: Date | null;
  lastRunId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const scheduleEntity = (schema: string) =>
  new EntitySchema<ScheduleRow>({
    name: 'DurableSchedule',
    tableName: 'schedules',
    schema,
    columns: {
      name: { type: 'text', primary: true },
      workflow: { type: 'text' },
      source: { type: 'text' },
      cron: { type: 'text' },
      timezone: { type: 'text' },
      overlap: { type: 'text' },
      catchupWindowMs: { name: 'catchup_window_ms', type: 'bigint' },
      catchup: { type: 'text' },
      input: { type: 'text' },
      jitterMs: { name: 'jitter_ms', type: 'bigint', default: 0 },
      paused: { type: 'boolean', default: false },
      workflowMissing: { name: 'workflow_missing', type: 'boolean', default: false },
      lastSlot: { name: 'last_slot', type: 'timestamptz' },
      nextFireAt: { name: 'next_fire_at', type: 'timestamptz', nullable: true },
      bufferedSlot: { name: 'buffered_slot', type: 'timestamptz', nullable: true },
      lastRunId: { name: 'last_run_id', type: 'text', nullable: true },
      createdAt: { name: 'created_at', type: 'timestamptz', default: () => 'now()' },
      updatedAt: { name: 'updated_at', type: 'timestamptz', default: () => 'now()' },
    },
    checks: [
      { name: 'schedules_source_check', expression: `source IN ('decorator','api')` },
      { name: 'schedules_overlap_check', expression: `overlap IN ('skip','bufferOne','allow','cancelOther')` },
      { name: 'schedules_catchup_check', expression: `catchup IN ('latest','all')` },
    ],
    indices: [{ name: 'schedules_due_idx', columns: ['nextFireAt'], where: 'next_fire_at IS NOT NULL' }],
  });

/** A row of `schedule_skips`: a slot that started no run, and why. */
export interface ScheduleSkipRow {
  id: string;
  schedule: string;
  slot: Date;
  reason: string;
  at: Date;
}

export const scheduleSkipEntity = (schema: string) =>
  new EntitySchema<ScheduleSkipRow>({
    name: 'DurableScheduleSkip',
    tableName: 'schedule_skips',
    schema,
    columns: {
      id: { type: 'bigint', primary: true, generated: 'increment' },
      schedule: { type: 'text' },
      slot: { type: 'timestamptz' },
      reason: { type: 'text' },
      at: { type: 'timestamptz', default: () => 'now()' },
    },
    uniques: [{ name: 'schedule_skips_slot_key', columns: ['schedule', 'slot'] }],
    checks: [{ name: 'schedule_skips_reason_check', expression: `reason IN ('overlap','missed','paused')` }],
  });
