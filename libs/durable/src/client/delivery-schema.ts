import type { RegisteredWorkflow } from '../runtime/workflow.registry';
import type { ChannelRef, PayloadSchema, SignalRef } from '../interfaces';

type Kind = 'signal' | 'channel';
type Ref = SignalRef<unknown> | ChannelRef<unknown>;

const declaredBy = (workflow: RegisteredWorkflow, kind: Kind) => (kind === 'signal' ? workflow.signals : workflow.channels);

/** The schema a delivery of `name` is validated with for runs of `workflow`: what it declares, else the ref's. */
export function deliverySchema(workflow: RegisteredWorkflow, kind: Kind, name: string, ref: Ref): PayloadSchema | undefined {
  return declaredBy(workflow, kind)?.get(name)?.schema ?? (typeof ref === 'object' ? ref.schema : undefined);
}

/**
 * The registered workflows that take a delivery of `name`, when they all validate it with one schema:
 * the payload can then be checked before the run is read, and the delivering statement itself checks
 * that the run is of one of them. Undefined when none takes it or their schemas differ.
 */
export function sharedDeliverySchema(
  workflows: RegisteredWorkflow[],
  kind: Kind,
  name: string,
  ref: Ref,
): { workflows: string[]; schema: PayloadSchema | undefined } | undefined {
  const takers = workflows.filter((w) => declaredBy(w, kind)?.has(name) ?? true);
  if (!takers.length) return undefined;
  const schema = deliverySchema(takers[0], kind, name, ref);
  if (takers.some((w) => deliverySchema(w, kind, name, ref) !== schema)) return undefined;
  return { workflows: takers.map((w) => w.name), schema };
}
