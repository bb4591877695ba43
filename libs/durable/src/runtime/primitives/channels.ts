import type { ChannelMessage, ChannelRef } from '../../interfaces';
import { checkName } from '../../schema/define-signal';
import { Execution, never } from '../execution';
import { deserialize } from '../serializer';
import { declaredName } from './declared';

/** The oldest un-acked message of the channel; writes nothing. The run parks while the channel is empty. */
export async function receive<T>(execution: Execution, ref: ChannelRef<T>): Promise<ChannelMessage<T>> {
  if (!execution.isActive) return never();
  execution.assertNotInStep('receive');
  const channel = declaredName(execution.workflow, 'channel', ref);
  const next = execution.journal.messages.get(channel)?.[0];
  if (next) return { key: next.key, seq: Number(next.seq), payload: deserialize<T>(next.payload), sentAt: new Date(next.sentAt) };
  return execution.suspend({ reason: { kind: 'channel', channel }, name: channel, wakeAt: null });
}

/** Journals the message as consumed, so `receive` moves past it, in this execution and every later one. */
export async function ack(execution: Execution, ref: ChannelRef<unknown>, key: string): Promise<void> {
  if (!execution.isActive) return never();
  execution.assertNotInStep('ack');
  const channel = declaredName(execution.workflow, 'channel', ref);
  checkName(key, 'message key');
  if (!(await execution.deps.journal.ack(execution.runId, execution.lease.token, channel, key))) return execution.lose();
  const list = execution.journal.messages.get(channel);
  const index = list?.findIndex((m) => m.key === key) ?? -1;
  if (index >= 0) list!.splice(index, 1);
}
