import type { WaitReason } from '../api/types';

/**
 * The signals, or the channels, a run waits for: the one of `waitForSignal` (or `receive`), or the
 * arms of that kind of a parked select, in their order.
 */
export function awaitedNames(waiting: WaitReason | undefined, kind: 'signal' | 'channel'): string[] {
  if (waiting?.kind === 'signal' && kind === 'signal') return [waiting.name];
  if (waiting?.kind === 'channel' && kind === 'channel') return [waiting.channel];
  if (waiting?.kind === 'select') return waiting.arms.flatMap((arm) => (arm.kind === kind && arm.name ? [arm.name] : []));
  return [];
}
