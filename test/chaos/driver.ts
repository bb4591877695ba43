import { CHAOS_ORDER_QUEUE } from './chaos.workflows';
import type { Fleet } from './fleet';
import type { PhasePlan, PlannedAction, PlannedDelivery, PlannedRollback, PlannedRun } from './plan';
import type { OperatorOutcome, SenderReply, TxMode } from './protocol';

/** What became of one planned delivery: the checker holds the library to every 'accepted'. */
export interface DeliveryRecord {
  runId: string;
  kind: PlannedDelivery['kind'];
  key: string;
  payload: Record<string, unknown>;
  sender: number;
  sentAt: number;
  doneAt: number;
  /** gone: the run was deleted by retention after it finished; rolledBack: its transaction was rolled back on purpose. */
  outcome: 'accepted' | 'duplicate' | 'closed' | 'gone' | 'rolledBack' | 'failed';
  attempts: number;
  error?: string;
  tx?: TxMode;
}

export interface StartRecord {
  runId: string;
  signalMode: PlannedRun['signalMode'];
  messages: string[];
  startVia: PlannedRun['startVia'];
  role: PlannedRun['role'];
  ok: boolean;
  attempts: number;
  error?: string;
}

/** A start made in a transaction rolled back on purpose: `rolledBack` when the sender saw it through to the rollback. */
export interface RollbackRecord {
  runId: string;
  rolledBack: boolean;
  attempts: number;
  error?: string;
}

/** What one run answered to one operator action (a bulk action makes one record per run). */
export interface OperatorRecord {
  runId: string;
  op: PlannedAction['op'];
  via: PlannedAction['via'];
  sentAt: number;
  doneAt: number;
  /** failed: no answer after every try (transient errors only). */
  outcome: OperatorOutcome['outcome'] | 'failed';
  attempts: number;
  error?: string;
}

/** Transient failures are retried from the next sender: at most this many tries, this far apart. */
const ATTEMPTS = 40;
const RETRY_MS = 250;
/** The closing message waits for every data message to be in (bounded), so it is last in the channel. */
const CLOSE_GATE_MS = 30_000;
/** A retry that comes before its run has failed is repeated this many times, this far apart. */
const RETRY_ACTION_TRIES = 30;
const RETRY_ACTION_EVERY_MS = 1_000;

/** Carries out the runs and deliveries of a phase plan through the sender processes. */
export class Driver {
  readonly starts: StartRecord[] = [];
  readonly deliveries: DeliveryRecord[] = [];
  readonly rollbacks: RollbackRecord[] = [];
  readonly operations: OperatorRecord[] = [];
  /** Settles when a run's start is done (whatever its answer): an operator action waits for its runs. */
  private readonly started = new Map<string, Promise<void>>();

  constructor(private readonly fleet: Fleet) {}

  /** Resolves when every start, delivery and operator action of the plan is done (each bounded in tries and time). */
  async runPhase(plan: PhasePlan, t0: number): Promise<void> {
    const runs = plan.runs.map((run) => {
      const done = deferred();
      this.started.set(run.id, done.promise);
      return this.drive(run, t0, done.resolve);
    });
    await Promise.all([...runs, ...plan.rollbacks.map((r) => this.rollBack(r, t0)), ...plan.actions.map((a) => this.act(a, t0))]);
  }

  private async drive(run: PlannedRun, t0: number, started: () => void): Promise<void> {
    await sleepUntil(t0 + run.at);
    const tx = run.startVia === 'tx' ? 'commit' : undefined;
    const queue = run.queued && CHAOS_ORDER_QUEUE.name;
    const start = await this.withRetries(0, (sender) =>
      sender.request({ op: 'start', runId: run.id, input: run.input, tx, ...(queue && { queue }) }),
    );
    this.starts.push({
      runId: run.id,
      signalMode: run.signalMode,
      messages: run.messages,
      startVia: run.startVia,
      role: run.role,
      ok: start.reply.ok,
      attempts: start.attempts,
      error: errorText(start.reply),
    });
    started();
    if (!start.reply.ok) return;
    const dataIn = new Map(run.messages.map((key) => [key, deferred()]));
    const gate = Promise.race([Promise.all([...dataIn.values()].map((d) => d.promise)), delay(CLOSE_GATE_MS)]);
    await Promise.all(
      run.deliveries.map(async (delivery) => {
        await sleepUntil(t0 + run.at + delivery.at);
        if (delivery.key === 'close') await gate;
        const record = await this.deliver(run.id, delivery);
        if (record.outcome !== 'failed') dataIn.get(delivery.key)?.resolve();
      }),
    );
  }

  private async deliver(runId: string, d: PlannedDelivery): Promise<DeliveryRecord> {
    const sentAt = Date.now();
    const { reply, attempts } = await this.withRetries(d.sender, (sender) =>
      d.kind === 'signal'
        ? sender.request({ op: 'signal', runId, name: d.key, payload: d.payload, tx: d.tx, txKey: `${d.sender}:${d.payload.copy}` })
        : sender.request({ op: 'send', runId, channel: 'events', key: d.key, payload: d.payload }),
    );
    const outcome = reply.ok
      ? reply.rolledBack
        ? 'rolledBack'
        : reply.accepted
          ? 'accepted'
          : 'duplicate'
      : reply.error.name === 'RunClosedError'
        ? 'closed'
        : reply.error.name === 'RunNotFoundError'
          ? 'gone'
          : 'failed';
    const record: DeliveryRecord = {
      runId,
      kind: d.kind,
      key: d.key,
      payload: d.payload,
      sender: d.sender,
      sentAt,
      doneAt: Date.now(),
      outcome,
      attempts,
      error: errorText(reply),
      tx: d.tx,
    };
    this.deliveries.push(record);
    return record;
  }

  private async rollBack(r: PlannedRollback, t0: number): Promise<void> {
    await sleepUntil(t0 + r.at);
    const { reply, attempts } = await this.withRetries(r.sender, (sender) =>
      sender.request({ op: 'start', runId: r.id, input: { napMs: 0, signalTimeoutMs: 0 }, tx: 'rollback' }),
    );
    this.rollbacks.push({ runId: r.id, rolledBack: reply.ok && !!reply.rolledBack, attempts, error: errorText(reply) });
  }

  /** Carries out an operator action once its runs were started; a retry is repeated while its run has not failed yet. */
  private async act(a: PlannedAction, t0: number): Promise<void> {
    await Promise.all(a.runIds.map((id) => this.started.get(id)));
    await sleepUntil(t0 + a.at);
    let pending = a.runIds;
    for (let round = 1; pending.length; round++) {
      const sentAt = Date.now();
      const { reply, attempts } = await this.withRetries(a.sender, (sender) =>
        sender.request({ op: 'operator', action: a.op, via: a.via, runIds: pending }),
      );
      const results: OperatorOutcome[] = reply.ok
        ? reply.results!
        : pending.map((runId) => ({ runId, outcome: 'refused', error: reply.error }));
      for (const r of results) {
        const outcome = reply.ok ? r.outcome : 'failed';
        this.operations.push({
          runId: r.runId,
          op: a.op,
          via: a.via,
          sentAt,
          doneAt: Date.now(),
          outcome,
          attempts,
          error: r.error && `${r.error.name}: ${r.error.message}`,
        });
      }
      const notYetFailed = (r: OperatorOutcome) =>
        r.error?.name === 'InvalidTransitionError' && /it is (pending|running|waiting)/.test(r.error.message);
      pending = a.op === 'retry' && reply.ok && round < RETRY_ACTION_TRIES ? results.filter(notYetFailed).map((r) => r.runId) : [];
      if (pending.length) await delay(RETRY_ACTION_EVERY_MS);
    }
  }

  /** Tries `send` from sender `first`, then the next ones in turn, while the failure is transient. */
  private async withRetries(first: number, send: (sender: Fleet['senders'][number]) => Promise<SenderReply>) {
    let reply!: SenderReply;
    let attempts = 0;
    while (attempts < ATTEMPTS) {
      reply = await send(this.fleet.senders[(first + attempts) % this.fleet.senders.length]);
      attempts++;
      if (reply.ok || FINAL_ERRORS.has(reply.error.name)) break;
      await delay(RETRY_MS);
    }
    return { reply, attempts };
  }
}

/** Answers that a retry cannot change. */
const FINAL_ERRORS = new Set([
  'RunClosedError',
  'RunNotFoundError',
  'InvalidPayloadError',
  'UnknownSignalError',
  'RunConflictError',
  'WorkflowNotFoundError',
]);

function errorText(reply: SenderReply): string | undefined {
  return reply.ok ? undefined : `${reply.error.name}: ${reply.error.message}`;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

export function sleepUntil(at: number): Promise<void> {
  return delay(at - Date.now());
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
