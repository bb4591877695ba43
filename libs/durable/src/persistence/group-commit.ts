/** How writes are grouped: at most `maxInFlight` batches on the wire at once, each of at most `maxBatch` writes. */
export interface GroupCommitPolicy {
  maxInFlight: number;
  maxBatch: number;
}

/** The default grouping of checkpoints (docs/architecture.md, "Group commit", has the measurements behind it). */
export const DEFAULT_GROUP_COMMIT: GroupCommitPolicy = { maxInFlight: 1, maxBatch: 64 };

/** How a kind of write is sent: a lone one in its own statement, several as one batch statement. */
export interface GroupWriter<I, O> {
  one(item: I): Promise<O>;
  /** Answers in the items' order, each a value or a promise of one. */
  batch(items: I[]): Promise<Array<O | Promise<O>>>;
}

interface Waiter<I, O> {
  item: I;
  resolve: (result: O | Promise<O>) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: writes submitted while earlier batches are on the wire wait for one to come back, and
 * then go out together, as one statement and one commit. Nothing waits on a timer: a write submitted
 * while fewer than `maxInFlight` batches are out leaves at once, alone, so a lone caller pays no delay;
 * only contention makes batches, and they grow with it. A batch of one goes out as the writer's lone
 * statement (Postgres plans it in a fraction of the batch statement's time). Each write's promise
 * settles with its own answer, so a caller continues only once its own row is committed. A batch the
 * writer rejects (it retries transient failures itself) is sent again one write at a time, so a write
 * Postgres cannot take fails alone and its neighbours land.
 */
export class GroupCommit<I, O> {
  private queue: Array<Waiter<I, O>> = [];
  private inFlight = 0;
  private readonly policy: GroupCommitPolicy;

  /** `policy` false: no grouping, every write goes out at once on its own. */
  constructor(
    private readonly writer: GroupWriter<I, O>,
    policy: GroupCommitPolicy | false,
    private readonly observe?: (size: number) => void,
  ) {
    this.policy = policy || { maxInFlight: Infinity, maxBatch: 1 };
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.policy.maxInFlight && this.queue.length) {
      const batch = this.queue.splice(0, this.policy.maxBatch);
      this.inFlight++;
      this.observe?.(batch.length);
      const sent =
        batch.length === 1 ? this.writer.one(batch[0].item).then((result) => [result]) : this.writer.batch(batch.map((w) => w.item));
      sent
        .then(
          (results) => batch.forEach((w, i) => w.resolve(results[i])),
          (error: unknown) => {
            if (batch.length === 1) batch[0].reject(error);
            else batch.forEach((w) => w.resolve(this.writer.one(w.item)));
          },
        )
        .finally(() => {
          this.inFlight--;
          this.flush();
        });
    }
  }
}
