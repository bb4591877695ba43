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
   * Records the database's clock as a statement read it (clock_timestamp()) and when its answer arrived
   * here (Date.now()). The read lies before the answer, so the offset is at most the true one: this
   * clock may lag the database's by the answer's way back, never lead it. Paired with the send, it led
   * by the statement's wait for a connection (or a new connection's opening), and a wait in-process
   * measured by it (a sleep's, a signal's timeout) ended that much before its journaled instant. The
   * last observation stands, not the best of several: a step of this process's clock is taken at the
   * next statement (a best kept a while would lead by the step meanwhile), at the cost of lagging by
   * a write's commit when a write was the last.
   */
  observe(dbNow: Date, answeredAt: number): void {
    this.offsetMs = dbNow.getTime() - answeredAt;
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}
