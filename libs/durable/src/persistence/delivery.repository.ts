import type { EntityManager } from 'typeorm';
import { wakeChannel } from '../durable.constants';
import { DurableDatabase } from './durable-database';
import { deliverSignalSql } from './sql/deliver-signal.sql';
import { lockRunSql, sendMessageSql } from './sql/send-message.sql';

/** `refused`: no open run of the workflows the delivery was limited to (the caller reads the run to say why). */
export type DeliveryResult<T> = { status: 'closed' } | { status: 'missing' } | { status: 'refused' } | ({ status: 'done' } & T);

/** Signals and channel messages into runs: deduplicated by key, then deliver-then-wake. */
export class DeliveryRepository {
  private readonly sql;

  constructor(private readonly db: DurableDatabase) {
    const t = db.tables;
    this.sql = { signal: deliverSignalSql(t), lock: lockRunSql(t), send: sendMessageSql(t), channel: wakeChannel(t.schema) };
  }

  /** `workflows`: deliver only to a run of one of these (null: any). */
  async signal(runId: string, name: string, payload: string, actor: string, workflows: string[] | null, manager?: EntityManager): Promise<DeliveryResult<{ accepted: boolean; deliveredAt: Date; woken: boolean }>> {
    const [row] = await this.db.query<{ open: boolean; delivered_at: Date | null; woken: string }>(this.sql.signal, [runId, name, payload, actor, this.sql.channel, workflows], manager);
    if (!row.open) return workflows ? { status: 'refused' } : this.closedOrMissing(runId, manager);
    if (row.delivered_at) return { status: 'done', accepted: true, deliveredAt: row.delivered_at, woken: Number(row.woken) > 0 };
    const [first] = await this.db.query<{ delivered_at: Date }>(`SELECT delivered_at FROM ${this.db.tables.signals} WHERE run_id = $1 AND name = $2`, [runId, name], manager);
    return { status: 'done', accepted: false, deliveredAt: first.delivered_at, woken: false };
  }

  /** Two statements in one transaction (the caller's, or one of its own): lock the run, then append. */
  async send(runId: string, channel: string, key: string, payload: string, actor: string, workflows: string[] | null, manager?: EntityManager): Promise<DeliveryResult<{ accepted: boolean; seq: number; woken: boolean }>> {
    const run = async (query: (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>) => {
      const [locked] = await query(this.sql.lock, [runId]);
      const open = locked && locked.status !== 'completed' && locked.status !== 'cancelled';
      if (workflows && !(open && workflows.includes(locked.workflow as string))) return { status: 'refused' as const };
      if (!locked) return { status: 'missing' as const };
      if (!open) return { status: 'closed' as const };
      const [row] = await query(this.sql.send, [runId, channel, key, payload, actor, this.sql.channel]);
      return { status: 'done' as const, accepted: row.seq !== null, seq: Number(row.existing_seq), woken: Number(row.woken) > 0 };
    };
    if (manager) return run((sql, params) => this.db.query(sql, params, manager));
    return this.db.transaction((client) => run(async (sql, params) => (await client.query(sql, params)).rows));
  }

  private async closedOrMissing(runId: string, manager?: EntityManager): Promise<DeliveryResult<never>> {
    const rows = await this.db.query<{ status: string }>(`SELECT status FROM ${this.db.tables.runs} WHERE id = $1`, [runId], manager);
    return rows.length ? { status: 'closed' } : { status: 'missing' };
  }
}
