import { Inject, Injectable } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { EntityManager } from 'typeorm';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { knownRunId } from './run-id';
import { RunClosedError, RunNotFoundError, WorkflowNotFoundError } from '../errors';
import type { ActorOptions, ChannelRef, MessageDelivery, PayloadSchema, SignalDelivery, SignalRef, TxOptions } from '../interfaces';
import { deliverySchema, sharedDeliverySchema } from './delivery-schema';
import { DeliveryRepository, DeliveryResult, DeliveryScope } from '../persistence/delivery.repository';
import { RunRepository } from '../persistence/run.repository';
import { declaredName } from '../runtime/primitives/declared';
import { serializePayload } from '../schema/serializer';
import { checkName, storableText } from '../schema/define-signal';
import { validatePayload } from '../schema/payload-validator';
import { DurableWorker } from '../worker/durable.worker';
import { WakeBus } from '../runtime/wake-bus';
import { DurableTelemetry } from '../observability/durable-telemetry';

/**
 * Delivers signals and channel messages into runs, from any process: at-least-once transport in,
 * exactly-once application. The payload is validated against the declared schema, journaled once by
 * key, and the run is woken (deliver-then-wake); nothing else is needed.
 */
@Injectable()
export class SignalService {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly registry: WorkflowRegistry,
    private readonly runs: RunRepository,
    private readonly deliveries: DeliveryRepository,
    private readonly worker: DurableWorker,
    private readonly bus: WakeBus,
    private readonly telemetry: DurableTelemetry,
  ) {}

  /** Journals the signal at most once per (run, name): the first payload wins; a redelivery is `accepted: false`. */
  async signal<T>(runId: string, signal: SignalRef<T>, payload: T, opts: TxOptions & ActorOptions = {}): Promise<SignalDelivery> {
    const name = checkName(typeof signal === 'string' ? signal : signal?.name, 'signal');
    return this.traced(`durable.signal ${name}`, runId, { 'durable.signal': name }, () =>
      this.deliverSignal(runId, name, signal, payload, opts),
    );
  }

  private async deliverSignal<T>(
    runId: string,
    name: string,
    signal: SignalRef<T>,
    payload: T,
    opts: TxOptions & ActorOptions,
  ): Promise<SignalDelivery> {
    const actor = storableText(String(opts.actor ?? 'api'));
    const result = await this.deliver(
      runId,
      'signal',
      name,
      signal,
      payload,
      `The payload of signal "${name}"`,
      opts.manager,
      (encoded, scope) => this.deliveries.signal(runId, name, encoded, actor, scope, opts.manager),
    );
    if (result.woken && !opts.manager) this.wakeHere(runId);
    return { runId, name, accepted: result.accepted, deliveredAt: result.deliveredAt };
  }

  /** Appends a message to a channel of the run, deduplicated by (run, channel, key). */
  async send<T>(
    runId: string,
    channel: ChannelRef<T>,
    key: string,
    payload: T,
    opts: TxOptions & ActorOptions = {},
  ): Promise<MessageDelivery> {
    const name = checkName(typeof channel === 'string' ? channel : channel?.name, 'channel');
    checkName(key, 'message key');
    return this.traced(`durable.send ${name}`, runId, { 'durable.channel': name, 'durable.message_key': key }, () =>
      this.sendMessage(runId, name, key, channel, payload, opts),
    );
  }

  private async sendMessage<T>(
    runId: string,
    name: string,
    key: string,
    channel: ChannelRef<T>,
    payload: T,
    opts: TxOptions & ActorOptions,
  ): Promise<MessageDelivery> {
    const actor = storableText(String(opts.actor ?? 'api'));
    const result = await this.deliver(
      runId,
      'channel',
      name,
      channel,
      payload,
      `The payload of message "${key}" on channel "${name}"`,
      opts.manager,
      (encoded, scope) => this.deliveries.send(runId, name, key, encoded, actor, scope, opts.manager),
    );
    if (result.woken && !opts.manager) this.wakeHere(runId);
    return { runId, channel: name, key, accepted: result.accepted, seq: result.seq };
  }

  /**
   * Validates and writes a delivery. When every workflow that takes it validates it alike, the payload
   * is checked at once and the write names those workflows (one round trip); otherwise, or when that
   * write finds no such open run, the run is read first: its workflow's schema, or the precise error.
   * Outside a caller's transaction, with a slot free here, the write also claims a run parked on this
   * delivery, which then executes here at once: no NOTIFY, no claim pass.
   */
  private async deliver<R>(
    runId: string,
    kind: 'signal' | 'channel',
    name: string,
    ref: SignalRef<unknown> | ChannelRef<unknown>,
    payload: unknown,
    what: string,
    manager: EntityManager | undefined,
    write: (encoded: string, scope: DeliveryScope) => Promise<DeliveryResult<R>>,
  ): Promise<R> {
    knownRunId(runId);
    const encode = async (schema: PayloadSchema | undefined) => serializePayload(await validatePayload(schema, payload, what), what);
    const claiming = (encoded: string, workflows: string[] | null) =>
      this.worker.reserving(
        !manager,
        (claimBy) => write(encoded, { workflows, claimBy, leaseMs: this.options.leaseMs }),
        (r) => (r.status === 'done' ? r.claimed : undefined),
      );
    const shared = sharedDeliverySchema(this.registry.all(), kind, name, ref);
    if (shared) {
      const result = await claiming(await encode(shared.schema), shared.workflows);
      if (result.status === 'done') return result;
    }
    const workflow = await this.workflowOf(runId, manager);
    declaredName(workflow, kind, name);
    return this.settled(runId, await claiming(await encode(deliverySchema(workflow, kind, name, ref)), null));
  }

  private traced<R extends { accepted: boolean }>(
    name: string,
    runId: string,
    attributes: Record<string, string>,
    deliver: () => Promise<R>,
  ): Promise<R> {
    return this.telemetry.tracing.trace(name, { 'durable.run_id': String(runId), ...attributes }, undefined, async (span) => {
      const delivery = await deliver();
      span.set({ 'durable.accepted': delivery.accepted });
      return delivery;
    });
  }

  private async workflowOf(runId: string, manager?: EntityManager) {
    const run = await this.runs.brief(knownRunId(runId), manager);
    if (!run) throw new RunNotFoundError(runId);
    if (run.status === 'completed' || run.status === 'cancelled') throw new RunClosedError(runId, run.status);
    const workflow = this.registry.find(run.workflow);
    if (!workflow) throw new WorkflowNotFoundError(run.workflow, this.registry.names());
    return workflow;
  }

  private settled<T>(runId: string, result: DeliveryResult<T>): T {
    if (result.status === 'missing') throw new RunNotFoundError(runId);
    if (result.status !== 'done') throw new RunClosedError(runId, 'completed or cancelled');
    return result;
  }

  /** The NOTIFY reaches this instance too, but waking directly saves its round trip. */
  private wakeHere(runId: string): void {
    this.bus.wake(runId);
    this.worker.nudge();
  }
}
