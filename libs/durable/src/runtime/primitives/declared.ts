import { UnknownSignalError } from '../../errors';
import type { ChannelRef, SignalRef } from '../../interfaces';
import type { RegisteredWorkflow } from '../workflow.registry';
import { checkName } from '../../schema/define-signal';

/** The name a signal or channel ref stands for, checked against what the workflow declares. */
export function declaredName(
  workflow: RegisteredWorkflow,
  kind: 'signal' | 'channel',
  ref: SignalRef<unknown> | ChannelRef<unknown>,
): string {
  const name = checkName(typeof ref === 'string' ? ref : ref?.name, kind);
  const declared = kind === 'signal' ? workflow.signals : workflow.channels;
  if (declared && !declared.has(name)) throw new UnknownSignalError(workflow.name, kind, name, [...declared.keys()]);
  return name;
}
