import { Injectable } from '@nestjs/common';

/**
 * The database's clock as seen from this process: wake instants are journaled from Postgres' now(),
 * so what remains of a wait is measured against it, not against a possibly skewed local clock.
 */
@Injectable()
export class DbClock {
  private offsetMs = 0;

  /** Records a now() read from the database at about this moment. */
  observe(dbNow: Date): void {
    this.offsetMs = dbNow.getTime() - Date.now();
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }
}
