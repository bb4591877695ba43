import { CancelledError, ResultTimeoutError, RunFailedError, RunNotFoundError } from '../errors';
import type { Duration, RunHandle, RunStatus } from '../interfaces';
import type { RunRepository } from '../persistence/run.repository';
import { toMs } from '../runtime/duration';
import { knownRunId } from './run-id';
import type { WakeBus } from '../worker/wake-bus';

const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 1_000;

/**
 * A run seen from outside. `result()` resolves at once when the run ends in this process (the wake
 * bus says so); for a run executing elsewhere it polls, backing off to once a second.
 */
export class DurableRunHandle<O> implements RunHandle<O> {
  constructor(
    readonly runId: string,
    readonly created: boolean,
    private readonly runs: RunRepository,
    private readonly bus: WakeBus,
  ) {}

  async status(): Promise<RunStatus> {
    const run = await this.runs.get(knownRunId(this.runId));
    if (!run) throw new RunNotFoundError(this.runId);
    return run.status;
  }

  async result(opts: { timeout?: Duration } = {}): Promise<O> {
    const timeoutMs = opts.timeout === undefined ? undefined : toMs(opts.timeout, 'result() timeout');
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
      const run = await this.runs.get(knownRunId(this.runId));
      if (!run) throw new RunNotFoundError(this.runId);
      if (run.status === 'completed') return run.output as O;
      if (run.status === 'failed') throw new RunFailedError(this.runId, run.error ?? { name: 'Error', message: 'failed' });
      if (run.status === 'cancelled') throw new CancelledError(this.runId, run.error?.message);
      const left = deadline - Date.now();
      if (left <= 0) throw new ResultTimeoutError(this.runId, timeoutMs!, run.status);
      await this.bus.nextFinish(this.runId, Math.min(poll, left));
    }
  }
}
