import type { JournalStep, ReceivedSignal, RunDetail, SignalPolicy } from '../api/types';

/** What a fork from one checkpoint keeps, runs again and copies: the server's rule (fork-run.sql), read off the run's detail. */
export interface ForkPlan {
  /** Copied into the fork's journal, in journal order: not run again. */
  kept: JournalStep[];
  /** The step and every checkpoint after it, in journal order. */
  again: JournalStep[];
  signals: Array<{ signal: ReceivedSignal; copied: boolean }>;
  messages: { copied: number; total: number };
}

/**
 * Steps are cut at the step's place in the journal, which the server sorts by the microsecond: the
 * detail's instants are to the millisecond, too coarse to tell quick steps apart. Signals and
 * messages have no place in that list, so they are compared with the step's instant, and one
 * delivered within the same millisecond counts as after it. A passed deadline is never copied (the
 * fork has its own).
 */
export function forkPlan(detail: Pick<RunDetail, 'steps' | 'signals' | 'messages'>, from: JournalStep, policy: SignalPolicy): ForkPlan {
  const index = detail.steps.findIndex((step) => step.key === from.key);
  const cut = index < 0 ? detail.steps.length : index; // gone since the page loaded: the server will refuse the fork
  const at = Date.parse(from.finishedAt);
  const copies = (iso: string) => policy === 'all' || Date.parse(iso) < at;
  return {
    kept: detail.steps.slice(0, cut).filter((step) => step.kind !== 'deadline-passed'),
    again: detail.steps.slice(cut),
    signals: detail.signals.map((signal) => ({ signal, copied: copies(signal.deliveredAt) })),
    messages: { copied: detail.messages.filter((message) => copies(message.sentAt)).length, total: detail.messages.length },
  };
}
