import type { ChannelMessage, ChannelRef } from '../../interfaces';
import { checkName } from '../../schema/define-signal';
import { Execution, never } from '../execution';
import { deserialize, serialize } from '../../schema/serializer';
import { declaredName } from './declared';

/** The oldest un-acked message of the channel; writes nothing. The run parks while the channel is empty. */
export async function receive<T>(execution: Execution, ref: ChannelRef<T>): Promise<ChannelMessage<T>> {
  if (!execution.isActive) return never();
  await execution.enter('receive');
  const channel = declaredName(execution.workflow, 'channel', ref);
  const key = execution.keyFor(channel, 'receive');
  // A receive's count shifts between executions (the messages acked since are gone, and the calls that took
  // them with them): the deadline thrown at a receive is thrown again at the channel's first receive. Not in a
  // run of key format 1, whose raw names may hold a '#' (channel `a#2`): there only the same key is the same call.
  const sameChannel = execution.journal.keyFormat >= 2 ? (at: string) => execution.isKeyFor(at, channel, 'receive') : undefined;
  execution.deadline.replayAt(key, sameChannel);
  const next = execution.journal.messages.get(channel)?.[0];
  if (next) return { key: next.key, seq: Number(next.seq), payload: deserialize<T>(next.payload), sentAt: new Date(next.sentAt) };
  await execution.deadline.beforeWait(key);
  return execution.suspend({ reason: { kind: 'channel', channel }, name: channel, wakeAt: null });
}

/** Journals the message as consumed, so `receive` moves past it, in this execution and every later one. */
export async function ack(execution: Execution, ref: ChannelRef<unknown>, key: string): Promise<void> {
  if (!execution.isActive) return never();
  await execution.enter('ack');
  const channel = declaredName(execution.workflow, 'channel', ref);
  checkName(key, 'message key');
  if (!(await execution.deps.journal.ack(execution.runId, execution.lease.token, channel, key))) return execution.lose();
  const list = execution.journal.messages.get(channel);
  const index = list?.findIndex((m) => m.key === key) ?? -1;
  if (index >= 0) list!.splice(index, 1);
}

/**
 * The whole consuming loop as one primitive: each message is handled once, in order, in a step keyed
 * by the message, then acked; the loop ends after the message `until` accepts, and that end is
 * journaled, so a later re-run returns the closing message at once instead of waiting on a channel
 * whose messages are all acked. The end is journaled before the closing message's ack (the other order
 * would lose the message to a crash between them), so a re-run that finds the end journaled and the
 * message still un-acked acks it then: a later read of the channel never sees it again.
 */
export async function consume<T>(
  execution: Execution,
  ref: ChannelRef<T>,
  handle: (message: ChannelMessage<T>) => unknown,
  until: (message: ChannelMessage<T>) => boolean,
): Promise<ChannelMessage<T>> {
  if (!execution.isActive) return never();
  await execution.enter('consume');
  const channel = declaredName(execution.workflow, 'channel', ref);
  const closedKey = execution.keyFor(channel, 'consume');
  execution.journal.steps.reach(`${closedKey}:`); // its handled messages are acked: a re-execution never sees them again
  const closed = execution.journal.steps.get(closedKey);
  if (closed) {
    const closing = await execution.replay<ChannelMessage<T>>(closedKey, closed);
    if (execution.journal.messages.get(channel)?.some((m) => m.key === closing.key)) await ack(execution, ref, closing.key);
    return closing;
  }
  for (;;) {
    const message = await receive(execution, ref);
    await execution.stepAt(`consume:${channel}`, `${closedKey}:${message.key}`, () => handle(message), {});
    if (until(message)) {
      await execution.checkpoint(
        closedKey,
        'step',
        { outcome: 'ok', result: serialize(message, `The closing message of channel "${channel}"`), error: null },
        null,
      );
      await ack(execution, ref, message.key);
      return message;
    }
    await ack(execution, ref, message.key);
  }
}
