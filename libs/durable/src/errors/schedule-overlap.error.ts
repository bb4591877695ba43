import { DurableError } from './durable.error';

/**
 * A trigger refused by the overlap policy in force, the schedule's or the trigger's own ('skip' or
 * 'bufferOne'): the schedule's last run is unfinished. Nothing was started.
 */
export class ScheduleOverlapError extends DurableError {
  readonly code = 'SCHEDULE_OVERLAP';
  constructor(
    readonly schedule: string,
    readonly runId: string,
    status: string,
    overlap: string,
  ) {
    super(
      `Schedule "${schedule}" has an unfinished run "${runId}" (${status}) and the overlap policy "${overlap}": the trigger started nothing. ` +
        'Trigger with overlap "allow" to start a run beside it, or "cancelOther" to cancel it first.',
      { runId, status, overlap },
    );
  }
}
