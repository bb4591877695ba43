import { CancelledError, ResultTimeoutError, RunFailedError, RunNotFoundError } from '../errors';
import type { Duration, RunHandle, RunStatus } from '../interfaces';
import type { RunRepository } from '../persistence/run.repository';
import { toMs } from '../schema/duration';
import { knownRunId } from './run-id';
import { CALL_OPTIONS, checkCallOptions } from './call-options';
import type { RunEnd, WakeBus } from '../runtime/wake-bus';

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
    /** True while this process executes the run: its end will come on the bus, no read is needed to wait. */
    private readonly executingHere: (runId: string) => boolean = () => false,
  ) {}

  async status(): Promise<RunStatus> {
    const run = await this.runs.get(knownRunId(this.runId));
    if (!run) throw new RunNotFoundError(this.runId);
    return run.status;
  }

  async result(opts: { timeout?: Duration } = {}): Promise<O> {
    checkCallOptions(opts, CALL_OPTIONS.result, 'result()');
    const timeoutMs = opts.timeout === undefined ? undefined : toMs(opts.timeout, 'result() timeout');
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    let status: RunStatus = 'running';
    for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
      // Executing here: subscribed before it can end, so its end cannot be missed and nothing is read.
      if (!this.executingHere(this.runId)) {
        const run = await this.runs.get(knownRunId(this.runId));
        if (!run) throw new RunNotFoundError(this.runId);
        if (run.status === 'cancelled') throw new CancelledError(this.runId, run.error?.message);
        if (run.status === 'completed' || run.status === 'failed')
          return this.settle({ status: run.status, output: run.output, error: run.error });
        status = run.status;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new ResultTimeoutError(this.runId, timeoutMs!, status);
      const end = await this.bus.nextFinish(this.runId, Math.min(poll, left));
      if (end) return this.settle(end);
    }
  }

  private settle(end: RunEnd): O {
    if (end.status === 'completed') return end.output as O;
    throw new RunFailedError(this.runId, end.error ?? { name: 'Error', message: 'failed' });
  }
}
