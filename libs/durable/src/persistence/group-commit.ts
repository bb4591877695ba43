import type { DurableDatabase } from './durable-database';
import { retryTelling } from './transient-retry';

/** How writes are grouped: at most `maxInFlight` batches on the wire at once, each of at most `maxBatch` writes. */
export interface GroupCommitPolicy {
  maxInFlight: number;
  maxBatch: number;
}

/** The default grouping of writes (docs/architecture.md, "Group commit", has the measurements behind it). */
export const DEFAULT_GROUP_COMMIT: GroupCommitPolicy = { maxInFlight: 1, maxBatch: 64 };

/** A statement with its parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** How a batch statement went: whether a try failed before the one that answered (it may have committed). */
export interface Sent {
  retried: boolean;
}

export type Rows = Array<Record<string, unknown>>;

/** A batch of one kind of write: its statement, and how that statement's rows answer the writes. */
export interface BatchStatement<O> extends Statement {
  /** Answers in the writes' order, each a value or a promise of one. */
  answer(rows: Rows, sent: Sent): Array<O | Promise<O>> | Promise<Array<O | Promise<O>>>;
  /** Its statement sets lock_timeout for the rest of its transaction (see startClaimedRunsSql): it goes after the others. */
  setsLockTimeout?: boolean;
}

/**
 * How a kind of write is sent: a lone one in its own statement (retried as the kind needs), several as
 * one batch statement. `afterBatch`: the write was in a batch that failed, and a try of that batch may
 * have committed before its answer was lost, so the lone write may find itself written (as after a retry).
 */
export interface GroupWriter<I, O> {
  one(item: I, afterBatch?: boolean): Promise<O>;
  batch(items: I[]): BatchStatement<O>;
}

/**
 * Sends the batch statements of one group in one transaction and one commit, retried whole through
 * transient errors (every batch statement is keyed and fenced, so a try after one that committed
 * changes nothing), answering each statement's rows in order.
 */
export type BatchSender = (statements: Statement[]) => Promise<{ rows: Rows[]; sent: Sent }>;

interface Kind<I, O> {
  writer: GroupWriter<I, O>;
  observe?: (size: number) => void;
}

interface Waiter<I, O> {
  kind: Kind<I, O>;
  item: I;
  resolve: (result: O | Promise<O>) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes submitted while earlier batches are on the wire wait for one to come back, and
 * then go out together, in one transaction and one commit, whatever their kind (starts, checkpoints,
 * timers, ends): each kind's writes as its batch statement, the statements of every kind in one
 * round trip (BatchSender). Nothing waits on a timer: a write submitted while fewer than `maxInFlight`
 * batches are out leaves at once, alone, so a lone caller pays no delay; only contention makes
 * batches, and they grow with it. A batch of one write goes out as its kind's lone statement (Postgres
 * plans it in a fraction of the batch statement's time). Each write's promise settles with its own
 * answer, so a caller continues only once its own row is committed. A batch Postgres refuses is sent
 * again one write at a time, so a write Postgres cannot take fails alone and its neighbours land.
 */
export class GroupCommit {
  private queue: Array<Waiter<unknown, unknown>> = [];
  private inFlight = 0;
  private readonly policy: GroupCommitPolicy;

  /** `policy` false: no grouping, every write goes out at once as its kind's lone statement. */
  constructor(
    private readonly send: BatchSender,
    policy: GroupCommitPolicy | false,
  ) {
    this.policy = policy || { maxInFlight: Infinity, maxBatch: 1 };
  }

  /** A kind of write of this group: the function that submits one. `observe` hears the size of each batch of the kind. */
  kind<I, O>(writer: GroupWriter<I, O>, observe?: (size: number) => void): (item: I) => Promise<O> {
    const kind: Kind<I, O> = { writer, observe };
    return (item) =>
      new Promise<O>((resolve, reject) => {
        this.queue.push({ kind, item, resolve, reject } as Waiter<unknown, unknown>);
        this.flush();
      });
  }

  private flush(): void {
    while (this.inFlight < this.policy.maxInFlight && this.queue.length) {
      const batch = this.queue.splice(0, this.policy.maxBatch);
      this.inFlight++;
      const release = () => {
        this.inFlight--;
        this.flush();
      };
      // Under contention (a batch of several, or writes already waiting), the executions this batch answered go on
      // as microtasks and most write again at once: the slot is given back once those have run, so their writes
      // leave together with the waiting ones rather than one alone and the rest a round trip later. A lone
      // caller's batch of one gives its slot back at once: its next write pays no turn of the event loop.
      this.dispatch(batch).finally(() => (batch.length > 1 || this.queue.length ? setImmediate(release) : release()));
    }
  }

  private async dispatch(batch: Array<Waiter<unknown, unknown>>): Promise<void> {
    const byKind = new Map<Kind<unknown, unknown>, Array<Waiter<unknown, unknown>>>();
    for (const w of batch) {
      const writes = byKind.get(w.kind);
      if (writes) writes.push(w);
      else byKind.set(w.kind, [w]);
    }
    for (const [kind, writes] of byKind) kind.observe?.(writes.length);
    if (batch.length === 1) {
      const [w] = batch;
      return w.kind.writer.one(w.item).then(w.resolve, w.reject);
    }
    const groups = [...byKind.values()]
      .map((writes) => ({ writes, statement: writes[0].kind.writer.batch(writes.map((w) => w.item)) }))
      .sort((a, b) => Number(a.statement.setsLockTimeout ?? false) - Number(b.statement.setsLockTimeout ?? false));
    let sent: Awaited<ReturnType<BatchSender>>;
    try {
      sent = await this.send(groups.map((g) => g.statement));
    } catch {
      return batch.forEach(alone);
    }
    await Promise.all(
      groups.map(async ({ writes, statement }, i) => {
        try {
          const answers = await statement.answer(sent.rows[i], sent.sent);
          writes.forEach((w, n) => w.resolve(answers[n]));
        } catch {
          writes.forEach(alone);
        }
      }),
    );
  }
}

/** The instance's group commit: its batches go out through `db.together`, retried whole through transient errors. */
export function groupCommitOn(db: DurableDatabase, policy: GroupCommitPolicy | false): GroupCommit {
  return new GroupCommit(async (statements) => {
    const { answer: rows, retried } = await retryTelling(undefined, () => db.together(statements));
    return { rows, sent: { retried } };
  }, policy);
}

/** A write of a batch that failed, sent again as its kind's lone statement: only a write that cannot land fails. */
const alone = <I, O>(w: Waiter<I, O>): void => w.resolve(w.kind.writer.one(w.item, true));
