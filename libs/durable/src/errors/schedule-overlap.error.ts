import { DurableError } from './durable.error';

/**
 * A trigger refused against the schedule's unfinished last run `runId`: by the overlap policy in force,
 * the schedule's or the trigger's own ('skip' or 'bufferOne'), or because the trigger expected another
 * run as the last (`expected`, its `expectLastRun`). Nothing was started or cancelled.
 */
export class ScheduleOverlapError extends DurableError {
  readonly code = 'SCHEDULE_OVERLAP';
  constructor(
    readonly schedule: string,
    readonly runId: string,
    status: string,
    overlap: string,
    expected?: string,
  ) {
    super(
      expected === undefined
        ? `Schedule "${schedule}" has an unfinished run "${runId}" (${status}) and the overlap policy "${overlap}": the trigger started nothing. ` +
            'Trigger with overlap "allow" to start a run beside it, or "cancelOther" to cancel it first.'
        : `Schedule "${schedule}"'s unfinished last run is "${runId}" (${status}), not "${expected}" as the trigger expected: it started and cancelled nothing. ` +
            'Look at that run, then trigger again.',
      expected === undefined ? { runId, status, overlap } : { runId, status, overlap, expected },
    );
  }
}
