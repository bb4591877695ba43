import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { wakeChannel } from '../durable.constants';
import { DurableDatabase } from './durable-database';
import { runDaySql } from './journal-partitions';
import type { LoadedJournal } from './journal.repository';
import { ClaimedRow, ClaimedRun, claimedFromRow } from './run.repository';
import { deliverSignalSql } from './sql/deliver-signal.sql';
import { deliverByKeysSql } from './sql/deliver-by-keys.sql';
import { reclaimDeliveredRunSql } from './sql/reclaim-delivered-run.sql';
import { lockRunSql, sendMessageSql } from './sql/send-message.sql';
import { retryOutsideTransaction, retryTelling, retryTransient } from './transient-retry';

/** `refused`: no open run of the workflows the delivery was limited to (the caller reads the run to say why). */
export type DeliveryResult<T> =
  { status: 'closed' } | { status: 'missing' } | { status: 'refused' } | ({ status: 'done'; claimed?: ClaimedRun } & T);

/**
 * Where a delivery may go and what it may do: `workflows` limits it to runs of those (null: any);
 * `claimBy` lets it claim, with a lease of `leaseMs`, a run parked on it (null: it only wakes).
 */
export interface DeliveryScope {
  workflows: string[] | null;
  claimBy: string | null;
  leaseMs: number;
}

type ClaimingRow = Partial<ClaimedRow> & { claimed_id: string | null; bumped_seq: string | null };

/** Signals and channel messages into runs: deduplicated by key, then deliver-then-wake. */
export class DeliveryRepository {
  private readonly sql;

  constructor(private readonly db: DurableDatabase) {
    const t = db.tables;
    this.sql = {
      signal: deliverSignalSql(t),
      byKeys: deliverByKeysSql(t),
      lock: lockRunSql(t),
      send: sendMessageSql(t),
      reclaim: reclaimDeliveredRunSql(t),
      channel: wakeChannel(t.schema),
    };
  }

  /**
   * One statement, keyed by (run, name): retried through transient errors outside a caller's
   * transaction; a try after one whose answer was lost claims back the run that one claimed (reclaimed).
   */
  async signal(
    runId: string,
    name: string,
    payload: string,
    actor: string,
    scope: DeliveryScope,
    manager?: EntityManager,
  ): Promise<DeliveryResult<{ accepted: boolean; deliveredAt: Date; woken: boolean }>> {
    const call = randomUUID();
    const delivered = await retryTelling(manager, () => this.deliverSignal(runId, name, payload, actor, scope, call, manager));
    return this.reclaimed(runId, scope, call, delivered);
  }

  private async deliverSignal(
    runId: string,
    name: string,
    payload: string,
    actor: string,
    scope: DeliveryScope,
    call: string,
    manager?: EntityManager,
  ): Promise<DeliveryResult<{ accepted: boolean; deliveredAt: Date; woken: boolean }>> {
    const [row] = await this.db.query<{ open: boolean; delivered_at: Date | null; woken: string } & ClaimingRow>(
      this.sql.signal,
      [runId, name, payload, actor, this.sql.channel, scope.workflows, scope.claimBy, scope.leaseMs, call],
      manager,
    );
    if (!row.open) return scope.workflows ? { status: 'refused' } : this.closedOrMissing(runId, manager);
    if (row.delivered_at) {
      const claimed = claimedWith(row, (journal) => journal.signals.push({ name, payload, deliveredAt: row.delivered_at! }));
      return { status: 'done', accepted: true, deliveredAt: row.delivered_at, woken: Number(row.woken) > 0, claimed };
    }
    const [first] = await this.db.query<{ delivered_at: Date }>(
      `SELECT delivered_at FROM ${this.db.tables.signals} WHERE run_id = $1 AND run_day = ${runDaySql(this.db.tables, '$1')} AND name = $2`,
      [runId, name],
      manager,
    );
    return { status: 'done', accepted: false, deliveredAt: first.delivered_at, woken: false };
  }

  /**
   * Two statements in one transaction (the caller's, or one of its own): lock the run, then append.
   * Keyed by (run, channel, key): its own transaction is retried through transient errors, and a try
   * after one whose answer was lost claims back the run that one claimed (reclaimed).
   */
  async send(
    runId: string,
    channel: string,
    key: string,
    payload: string,
    actor: string,
    scope: DeliveryScope,
    manager?: EntityManager,
  ): Promise<DeliveryResult<{ accepted: boolean; seq: number; woken: boolean }>> {
    const call = randomUUID();
    const run = async (query: (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>) => {
      const [locked] = await query(this.sql.lock, [runId]);
      const open = locked && locked.status !== 'completed' && locked.status !== 'cancelled';
      if (scope.workflows && !(open && scope.workflows.includes(locked.workflow as string))) return { status: 'refused' as const };
      if (!locked) return { status: 'missing' as const };
      if (!open) return { status: 'closed' as const };
      const [row] = (await query(this.sql.send, [
        runId,
        channel,
        key,
        payload,
        actor,
        this.sql.channel,
        scope.claimBy,
        scope.leaseMs,
        call,
      ])) as Array<{ seq: number | null; sent_at: string; existing_seq: number; woken: string } & ClaimingRow>;
      const claimed = claimedWith(row, (journal) =>
        journal.messages.push({ channel, key, seq: row.seq!, payload, sentAt: new Date(row.sent_at).toISOString() }),
      );
      return { status: 'done' as const, accepted: row.seq !== null, seq: Number(row.existing_seq), woken: Number(row.woken) > 0, claimed };
    };
    if (manager) return run((sql, params) => this.db.query(sql, params, manager));
    const sent = await retryTelling(undefined, () =>
      this.db.transaction((client) => run(async (sql, params) => (await client.query(sql, params)).rows)),
    );
    return this.reclaimed<{ accepted: boolean; seq: number; woken: boolean }>(runId, scope, call, sent);
  }

  /**
   * The answer of a delivery call, with the run claimed back when a try failed before the one that
   * answered and that one found the delivery recorded and claimed nothing: the failed try may have
   * committed the delivery and a claim of the run, whose answer never came, so the run would wait for
   * that claim's lease to lapse. Claimed back (reclaimDeliveredRunSql), it executes here now, and the
   * delivery is this call's (only the try that records a delivery claims): accepted.
   */
  private async reclaimed<T extends { accepted: boolean }>(
    runId: string,
    scope: DeliveryScope,
    call: string,
    { answer, retried }: { answer: DeliveryResult<T>; retried: boolean },
  ): Promise<DeliveryResult<T>> {
    if (!retried || !scope.claimBy || answer.status !== 'done' || answer.accepted || answer.claimed) return answer;
    const [row] = await retryTransient(() =>
      this.db.query<ClaimedRow & { claimed_id: string }>(this.sql.reclaim, [runId, scope.claimBy, scope.leaseMs, call]),
    );
    return row ? { ...answer, accepted: true, claimed: claimedFromRow(row.claimed_id, row, Date.now(), 0) } : answer;
  }

  /**
   * A signal to the open runs of `workflows` that have every key (see deliverByKeysSql): one
   * statement, so it is whole or not at all; `tooMany` (nothing written) when a fan-out to all
   * matched more than `most`. Keyed by (run, name) per run: retried through transient errors.
   */
  async signalByKeys(
    keys: string,
    name: string,
    payload: string,
    actor: string,
    workflows: string[],
    fanOut: { one: true } | { most: number },
    manager?: EntityManager,
  ): Promise<{ tooMany: true } | { deliveries: Array<{ runId: string; accepted: boolean; deliveredAt: Date }>; woken: string[] }> {
    const limit = 'one' in fanOut ? 1 : fanOut.most + 1;
    const most = 'one' in fanOut ? null : fanOut.most;
    const [row] = await retryOutsideTransaction(manager, () =>
      this.db.query<{ ok: boolean; deliveries: Array<{ runId: string; accepted: boolean; deliveredAt: string }>; woken: string[] | null }>(
        this.sql.byKeys,
        [keys, name, payload, actor, this.sql.channel, workflows, limit, most],
        manager,
      ),
    );
    if (!row.ok) return { tooMany: true };
    return {
      deliveries: row.deliveries.map((d) => ({ runId: d.runId, accepted: d.accepted, deliveredAt: new Date(d.deliveredAt) })),
      woken: row.woken ?? [],
    };
  }

  private async closedOrMissing(runId: string, manager?: EntityManager): Promise<DeliveryResult<never>> {
    const rows = await this.db.query<{ status: string }>(`SELECT status FROM ${this.db.tables.runs} WHERE id = $1`, [runId], manager);
    return rows.length ? { status: 'closed' } : { status: 'missing' };
  }
}

/**
 * The run a delivery claimed, if any. A current journal (see claimedByDeliverySql) was read without
 * the delivery itself: `add` puts it in, and it takes the wake_seq the delivery left. A journal that
 * is not current is left out, and the execution reads it afresh.
 */
function claimedWith(row: ClaimingRow, add: (journal: LoadedJournal) => void): ClaimedRun | undefined {
  if (!row.claimed_id) return undefined;
  const run = claimedFromRow(row.claimed_id, row as ClaimedRow, Date.now(), 0); // the answer is here: see DbClock.observe
  if (run.journal) {
    add(run.journal);
    run.journal.wakeSeq = row.bumped_seq!;
  }
  return run;
}
