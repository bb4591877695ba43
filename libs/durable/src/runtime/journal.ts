import type { LoadedJournal, StoredChild, StoredMessage, StoredStep } from '../persistence/journal.repository';
import { DEADLINE_PASSED_KEY, KEY_FORMAT } from '../durable.constants';

/**
 * The checkpoints by key, remembering which of those loaded this execution has looked up: the ones it
 * has not reached tell that an earlier execution went further (`ctx.patched`), or that the code no
 * longer reaches them (the run's warning).
 */
export class JournalSteps extends Map<string, StoredStep> {
  private readonly loaded = new Set<string>();
  private readonly reached = new Set<string>();

  load(key: string, step: StoredStep): void {
    this.loaded.add(key);
    super.set(key, step);
  }

  override get(key: string): StoredStep | undefined {
    this.reached.add(key);
    return super.get(key);
  }

  override has(key: string): boolean {
    this.reached.add(key);
    return super.has(key);
  }

  /** Marks every loaded key under `prefix` as reached (the handled messages of a consume, acked and gone). */
  reach(prefix: string): void {
    for (const key of this.loaded) if (key.startsWith(prefix)) this.reached.add(key);
  }

  /** The loaded checkpoints this execution has not looked up (the deadline's passing aside: it is read only where it was thrown). */
  unreached(): string[] {
    return [...this.loaded].filter((key) => !this.reached.has(key) && key !== DEADLINE_PASSED_KEY);
  }
}

/** An execution's in-memory view of its run's journal, loaded once and kept current by its own writes. */
export class Journal {
  readonly steps = new JournalSteps();
  readonly signals = new Map<string, string | null>();
  /** When each buffered signal was delivered (ms since the epoch): a select's earliest-delivered rule. */
  readonly signalTimes = new Map<string, number>();
  /** Un-acked messages per channel, oldest first. */
  readonly messages = new Map<string, StoredMessage[]>();
  /** Children known to have ended, with their outcomes (the load brings the one the run parked on; result() reads others). */
  readonly children = new Map<string, StoredChild>();

  private constructor(
    readonly wakeSeq: string,
    readonly dbNow: Date,
    /** The run's deadline (ms since the epoch), as loaded; undefined: none. */
    readonly deadline: number | undefined,
    /** The run's format (KEY_FORMAT): how its keys spell names, and how its timed signal waits decide. A run started here has this version's. */
    readonly keyFormat: number,
    /** The run's lease token when loaded (tells a lost lease from a moved wake_seq after a refused park). */
    readonly leaseToken?: string,
  ) {}

  /** A run started here a moment ago: nothing is journaled, nothing needs loading. */
  static empty(wakeSeq: string, deadline: Date | null | undefined): Journal {
    return new Journal(wakeSeq, new Date(), deadline ? new Date(deadline).getTime() : undefined, KEY_FORMAT);
  }

  static from(loaded: LoadedJournal): Journal {
    const deadline = loaded.deadline ? new Date(loaded.deadline).getTime() : undefined;
    const journal = new Journal(loaded.wakeSeq, loaded.dbNow, deadline, loaded.keyFormat, loaded.leaseToken);
    for (const { key, ...step } of loaded.steps) journal.steps.load(key, step);
    journal.takeDeliveries(loaded);
    for (const child of loaded.children) journal.children.set(child.id, child);
    return journal;
  }

  /** The buffered signals and un-acked messages of a load, in place of the ones held (a wait in-process read them again). */
  takeDeliveries(loaded: Pick<LoadedJournal, 'signals' | 'messages'>): void {
    for (const signal of loaded.signals) {
      this.signals.set(signal.name, signal.payload);
      this.signalTimes.set(signal.name, new Date(signal.deliveredAt).getTime());
    }
    this.messages.clear();
    for (const message of loaded.messages) {
      const list = this.messages.get(message.channel) ?? [];
      list.push(message);
      this.messages.set(message.channel, list);
    }
  }
}
