import { Injectable } from '@nestjs/common';

/**
 * The database's clock as seen from this process: wake instants are journaled from Postgres' now(),
 * so what remains of a wait is measured against it, not against a possibly skewed local clock.
 */
@Injectable()
export class DbClock {
  private offsetMs = 0;
  /**
   * How far schedules' time is ahead of the database's (behind when negative): 0 in production; the
   * testing module's clock moves it, so schedules fire at the slots a test travels to.
   */
  shiftMs = 0;

  /**
   * Records a now() the database read for a statement sent at `sentAt` (Date.now()). now() is taken when
   * the statement starts, so it pairs with the send, not with the answer's arrival a commit later.
   */
  observe(dbNow: Date, sentAt: number): void {
    this.offsetMs = dbNow.getTime() - sentAt;
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}
