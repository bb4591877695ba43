import { Inject, Injectable } from '@nestjs/common';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { EntityManager } from 'typeorm';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { knownRunId } from './run-id';
import { InvalidArgumentError, RunClosedError, RunNotFoundError, WorkflowNotFoundError } from '../errors';
import type {
  ActorOptions,
  ChannelRef,
  MessageDelivery,
  PayloadSchema,
  RunHandle,
  SignalByKeysOptions,
  SignalDelivery,
  SignalRef,
  SignalWithStartRun,
  TxOptions,
  WorkflowRef,
} from '../interfaces';
import { deliverySchema, sharedDeliverySchema } from './delivery-schema';
import { DeliveryRepository, DeliveryResult, DeliveryScope } from '../persistence/delivery.repository';
import { RunRepository } from '../persistence/run.repository';
import { declaredName } from '../runtime/primitives/declared';
import { serializePayload } from '../schema/serializer';
import { checkName } from '../schema/define-signal';
import { actorOf } from './actor';
import { CALL_OPTIONS, checkCallOptions } from './call-options';
import { validatePayload } from '../schema/payload-validator';
import { DurableWorker } from '../worker/durable.worker';
import { WakeBus } from '../runtime/wake-bus';
import { DurableTelemetry } from '../observability/durable-telemetry';
import { DurableDatabase } from '../persistence/durable-database';
import { checkKeys } from '../schema/business-keys';
import { RunStarter } from './run-starter';
import { DurableRunHandle } from './run-handle';

/** The most runs one fan-out to all may deliver to: one statement, whole or not at all. */
const MAX_FAN_OUT = 1_000;

/**
 * Delivers signals and channel messages into runs, from any process: at-least-once transport in,
 * exactly-once application. The payload is validated against the declared schema, journaled once by
 * key, and the run is woken (deliver-then-wake); nothing else is needed.
 * A call given an option it does not take (a misspelt one) throws InvalidArgumentError naming it, before anything is read or written.
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
    private readonly starter: RunStarter,
    private readonly db: DurableDatabase,
  ) {}

  /** Journals the signal at most once per (run, name): the first payload wins; a redelivery is `accepted: false`. */
  async signal<T>(runId: string, signal: SignalRef<T>, payload: T, opts: TxOptions & ActorOptions = {}): Promise<SignalDelivery> {
    checkCallOptions(opts, CALL_OPTIONS.delivery, 'signal()');
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
    prepared?: PreparedDelivery,
  ): Promise<SignalDelivery> {
    const actor = actorOf(opts);
    const result = await this.deliver(
      runId,
      'signal',
      name,
      signal,
      payload,
      signalWhat(name),
      opts.manager,
      (encoded, scope) => this.deliveries.signal(runId, name, encoded, actor, scope, opts.manager),
      prepared,
    );
    if (result.woken && !opts.manager) this.wakeHere(runId);
    return { runId, name, accepted: result.accepted, deliveredAt: result.deliveredAt };
  }

  /**
   * Delivers the signal to the open runs (not completed or cancelled) that have every one of `keys`,
   * of the registered workflows that accept it (or of `workflow`): each takes it at most once (its
   * first payload stays), and is woken. `fanOut: 'one'` delivers to the oldest only, one that has not
   * failed if any matches (a failed run's fork or successor is the one that goes on). One statement:
   * every delivery is recorded or none (more than 1,000 matches refuses with InvalidArgumentError).
   * No match: `[]`, nothing recorded. No workflow registered here that takes the signal: InvalidArgumentError.
   */
  async signalByKeys<T>(
    keys: Record<string, string>,
    signal: SignalRef<T>,
    payload: T,
    opts: SignalByKeysOptions & TxOptions & ActorOptions = {},
  ): Promise<SignalDelivery[]> {
    checkCallOptions(opts, CALL_OPTIONS.signalByKeys, 'signalByKeys()');
    const name = checkName(typeof signal === 'string' ? signal : signal?.name, 'signal');
    const checked = checkKeys(keys, 'signalByKeys keys', true);
    if (opts.fanOut !== undefined && opts.fanOut !== 'all' && opts.fanOut !== 'one')
      throw new InvalidArgumentError(`signalByKeys fanOut must be 'all' or 'one'; got ${JSON.stringify(opts.fanOut)}.`);
    const { workflows, schema } = this.takersOf(name, signal, opts.workflow);
    const what = `The payload of signal "${name}"`;
    const encoded = serializePayload(await validatePayload(schema, payload, what), what);
    const actor = actorOf(opts);
    const fanOut = opts.fanOut === 'one' ? ({ one: true } as const) : { most: MAX_FAN_OUT };
    const result = await this.deliveries.signalByKeys(JSON.stringify(checked), name, encoded, actor, workflows, fanOut, opts.manager);
    if ('tooMany' in result)
      throw new InvalidArgumentError(
        `signalByKeys: more than ${MAX_FAN_OUT} open runs have the keys ${JSON.stringify(checked)}; nothing was delivered. Narrow the keys or name the workflow.`,
      );
    if (!opts.manager) for (const runId of result.woken) this.wakeHere(runId);
    return result.deliveries.map((d) => ({ runId: d.runId, name, accepted: d.accepted, deliveredAt: d.deliveredAt }));
  }

  /**
   * Starts the run if it does not exist, then delivers the signal, in one transaction (the caller's
   * with `manager`): concurrent calls start one run and deliver once (the first payload wins).
   * `created` says whether this call started it; a run of another workflow under the id is a RunConflictError.
   */
  async signalWithStart<I, O, T>(
    workflow: WorkflowRef<I, O>,
    run: SignalWithStartRun<I>,
    signal: SignalRef<T>,
    payload: T,
    opts: TxOptions & ActorOptions = {},
  ): Promise<{ run: RunHandle<O>; delivery: SignalDelivery }> {
    const registered = this.registry.resolve(workflow as WorkflowRef<unknown, unknown>);
    if (typeof run !== 'object' || run === null || typeof run.runId !== 'string')
      throw new InvalidArgumentError('signalWithStart needs { runId, input }: the run id is what makes the start happen once.');
    checkCallOptions(run, CALL_OPTIONS.signalWithStartRun, 'signalWithStart() run');
    checkCallOptions(opts, CALL_OPTIONS.delivery, 'signalWithStart()');
    // Validated before the transaction opens: a slow refinement must not hold it (its idle timeout ends it).
    const name = checkName(typeof signal === 'string' ? signal : signal?.name, 'signal');
    declaredName(registered, 'signal', name);
    const prepared = {
      workflow: registered.name,
      encoded: await this.encode(deliverySchema(registered, 'signal', name, signal), payload, signalWhat(name)),
    };
    const both = async (manager: EntityManager) => {
      const { runId, created } = await this.starter.start({
        workflow: registered,
        input: run.input,
        runId: run.runId,
        manager,
        actor: actorOf(opts),
        keys: run.keys,
      });
      const delivery = await this.traced(`durable.signal ${name}`, runId, { 'durable.signal': name }, () =>
        this.deliverSignal(runId, name, signal, payload, { manager, actor: opts.actor }, prepared),
      );
      return { runId, created, delivery };
    };
    // READ COMMITTED whatever the database's default: a start that waited on a concurrent one's insert of the id then finds
    // it, where a repeatable read snapshot taken before the wait fails (40001).
    const { runId, created, delivery } = opts.manager
      ? await both(opts.manager)
      : await this.db.dataSource.transaction('READ COMMITTED', both);
    if (!opts.manager) {
      this.worker.nudge();
      this.bus.wake(runId);
    }
    return { run: new DurableRunHandle<O>(runId, created, this.runs, this.bus, (id) => this.worker.isExecuting(id)), delivery };
  }

  /** The workflows whose runs may take the signal, and the one schema it is validated with. */
  private takersOf(name: string, signal: SignalRef<unknown>, workflow?: WorkflowRef<any, any>) {
    if (workflow !== undefined) {
      const registered = this.registry.resolve(workflow as WorkflowRef<unknown, unknown>);
      declaredName(registered, 'signal', name);
      return { workflows: [registered.name], schema: deliverySchema(registered, 'signal', name, signal) };
    }
    const shared = sharedDeliverySchema(this.registry.all(), 'signal', name, signal);
    if (shared) return shared;
    const takers = this.registry.all().filter((w) => w.signals?.has(name) ?? true);
    // Else the delivery would match no run and answer [], as if no run had the keys: a misspelt name or an
    // instance that does not register the workflow (its payload could not be validated here) must not look like that.
    if (!takers.length)
      throw new InvalidArgumentError(
        `signalByKeys: no workflow registered on this instance takes signal "${name}" (registered: ${
          this.registry
            .all()
            .map((w) => `"${w.name}"`)
            .join(', ') || 'none'
        }); a run's signal is validated by its workflow, so send it from an instance that registers one.`,
      );
    throw new InvalidArgumentError(
      `signalByKeys: the workflows ${takers.map((w) => `"${w.name}"`).join(', ')} validate signal "${name}" differently; name the one you mean with { workflow }.`,
    );
  }

  /** Appends a message to a channel of the run, deduplicated by (run, channel, key). */
  async send<T>(
    runId: string,
    channel: ChannelRef<T>,
    key: string,
    payload: T,
    opts: TxOptions & ActorOptions = {},
  ): Promise<MessageDelivery> {
    checkCallOptions(opts, CALL_OPTIONS.delivery, 'send()');
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
    const actor = actorOf(opts);
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
   * delivery, which then executes here at once: no NOTIFY, no claim pass. `prepared`: the payload was
   * validated and encoded already, for the run's workflow.
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
    prepared?: PreparedDelivery,
  ): Promise<R> {
    knownRunId(runId);
    const encode = (schema: PayloadSchema | undefined) => this.encode(schema, payload, what);
    const claiming = (encoded: string, workflows: string[] | null) =>
      this.worker.reserving(
        !manager,
        (claimBy) => write(encoded, { workflows, claimBy, leaseMs: this.options.leaseMs }),
        (r) => (r.status === 'done' ? r.claimed : undefined),
      );
    if (prepared) return this.settled(runId, await claiming(prepared.encoded, [prepared.workflow]));
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

  private async encode(schema: PayloadSchema | undefined, payload: unknown, what: string): Promise<string> {
    return serializePayload(await validatePayload(schema, payload, what), what);
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

/** A delivery's payload validated and encoded ahead of the write, for the one workflow it goes to. */
interface PreparedDelivery {
  workflow: string;
  encoded: string;
}

const signalWhat = (name: string) => `The payload of signal "${name}"`;
