import type { LoadedJournal, StoredChild, StoredMessage, StoredStep } from '../persistence/journal.repository';

/** An execution's in-memory view of its run's journal, loaded once and kept current by its own writes. */
export class Journal {
  readonly steps = new Map<string, StoredStep>();
  readonly signals = new Map<string, string | null>();
  /** Un-acked messages per channel, oldest first. */
  readonly messages = new Map<string, StoredMessage[]>();
  /** Children known to have ended, with their outcomes (the load brings the one the run parked on; result() reads others). */
  readonly children = new Map<string, StoredChild>();

  private constructor(
    readonly wakeSeq: string,
    readonly dbNow: Date,
    /** The run's lease token when loaded (tells a lost lease from a moved wake_seq after a refused park). */
    readonly leaseToken?: string,
  ) {}

  /** A run started here a moment ago: nothing is journaled, nothing needs loading. */
  static empty(wakeSeq: string): Journal {
    return new Journal(wakeSeq, new Date());
  }

  static from(loaded: LoadedJournal): Journal {
    const journal = new Journal(loaded.wakeSeq, loaded.dbNow, loaded.leaseToken);
    for (const { key, ...step } of loaded.steps) journal.steps.set(key, step);
    for (const signal of loaded.signals) journal.signals.set(signal.name, signal.payload);
    for (const message of loaded.messages) {
      const list = journal.messages.get(message.channel) ?? [];
      list.push(message);
      journal.messages.set(message.channel, list);
    }
    for (const child of loaded.children) journal.children.set(child.id, child);
    return journal;
  }
}
