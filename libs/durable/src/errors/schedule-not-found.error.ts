import { DurableError } from './durable.error';

/** No schedule has this name. */
export class ScheduleNotFoundError extends DurableError {
  readonly code = 'SCHEDULE_NOT_FOUND';
  constructor(readonly schedule: string) {
    super(`No schedule named "${schedule}". Check the name, or list schedules with ScheduleService.list().`);
  }
}
