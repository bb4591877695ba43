import { EntitySchema } from 'typeorm';

/** A row of `instances`: a live application instance, its heartbeat and its last sweep. */
export interface InstanceRow {
  id: string;
  startedAt: Date;
  heartbeatAt: Date;
  lastSweepAt: Date | null;
  detail: Record<string, unknown> | null;
}

export const instanceEntity = (schema: string) =>
  new EntitySchema<InstanceRow>({
    name: 'DurableInstance',
    tableName: 'instances',
    schema,
    columns: {
      id: { type: 'text', primary: true },
      startedAt: { name: 'started_at', type: 'timestamptz', default: () => 'now()' },
      heartbeatAt: { name: 'heartbeat_at', type: 'timestamptz', default: () => 'now()' },
      lastSweepAt: { name: 'last_sweep_at', type: 'timestamptz', nullable: true },
      detail: { type: 'jsonb', nullable: true },
    },
  });
