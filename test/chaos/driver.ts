import type { Fleet } from './fleet';
import type { PhasePlan, PlannedDelivery, PlannedRun } from './plan';
import type { SenderReply } from './protocol';

/** What became of one planned delivery: the checker holds the library to every 'accepted'. */
export interface DeliveryRecord {
  runId: string;
  kind: PlannedDelivery['kind'];
  key: string;
  payload: Record<string, unknown>;
  sender: number;
  sentAt: number;
  doneAt: number;
  outcome: 'accepted' | 'duplicate' | 'closed' | 'failed';
  attempts: number;
  error?: string;
}

export interface StartRecord {
  runId: string;
  signalMode: PlannedRun['signalMode'];
  messages: string[];
  ok: boolean;
  attempts: number;
  error?: string;
}

/** Transient failures are retried from the next sender: at most this many tries, this far apart. */
const ATTEMPTS = 40;
const RETRY_MS = 250;
/** The closing message waits for every data message to be in (bounded), so it is last in the channel. */
const CLOSE_GATE_MS = 30_000;

/** Carries out the runs and deliveries of a phase plan through the sender processes. */
export class Driver {
  readonly starts: StartRecord[] = [];
  readonly deliveries: DeliveryRecord[] = [];

  constructor(private readonly fleet: Fleet) {}

  /** Resolves when every start and delivery of the plan is done (each bounded in tries and time). */
  async runPhase(plan: PhasePlan, t0: number): Promise<void> {
    await Promise.all(plan.runs.map((run) => this.drive(run, t0)));
  }

  private async drive(run: PlannedRun, t0: number): Promise<void> {
    await sleepUntil(t0 + run.at);
    const start = await this.withRetries(0, (sender) => sender.request({ op: 'start', runId: run.id, input: run.input }));
    this.starts.push({ runId: run.id, signalMode: run.signalMode, messages: run.messages, ok: start.reply.ok, attempts: start.attempts, error: errorText(start.reply) });
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
        ? sender.request({ op: 'signal', runId, name: d.key, payload: d.payload })
        : sender.request({ op: 'send', runId, channel: 'events', key: d.key, payload: d.payload }),
    );
    const outcome = reply.ok ? (reply.accepted ? 'accepted' : 'duplicate') : reply.error.name === 'RunClosedError' ? 'closed' : 'failed';
    const record: DeliveryRecord = { runId, kind: d.kind, key: d.key, payload: d.payload, sender: d.sender, sentAt, doneAt: Date.now(), outcome, attempts, error: errorText(reply) };
    this.deliveries.push(record);
    return record;
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
const FINAL_ERRORS = new Set(['RunClosedError', 'RunNotFoundError', 'InvalidPayloadError', 'UnknownSignalError', 'RunConflictError', 'WorkflowNotFoundError']);

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
