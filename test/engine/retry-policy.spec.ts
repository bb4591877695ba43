import { backoffMs, DEFAULT_RUN_RETRY } from 'nestjs-durable/runtime/retry-policy';
import { settledWithin } from 'nestjs-durable/runtime/execution';

describe('retry backoff arithmetic', () => {
  it('a zero initial delay stays zero however many attempts failed (the power overflowed to Infinity, and 0 × Infinity is NaN)', () => {
    const policy = { ...DEFAULT_RUN_RETRY, initialDelayMs: 0, maxAttempts: 5_000 };
    expect(backoffMs(policy, 2_000)).toBe(0);
    expect(backoffMs({ ...DEFAULT_RUN_RETRY, maxAttempts: 5_000 }, 2_000)).toBe(DEFAULT_RUN_RETRY.maxDelayMs);
  });

  it("an in-process wait longer than a Node timer's range waits, instead of ending at once", async () => {
    let stop: (value?: unknown) => void = () => undefined;
    const work = new Promise((resolve) => (stop = resolve)); // ends the wait (and clears its timer) once checked
    const waited = settledWithin(work, 2 ** 31).then(() => 'ended');
    const soon = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 50));
    expect(await Promise.race([waited, soon])).toBe('still waiting');
    stop();
    await waited;
  });
});
