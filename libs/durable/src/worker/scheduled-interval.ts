import type { SchedulerRegistry } from '@nestjs/schedule';

/**
 * Runs `tick` every `ms` as an interval of @nestjs/schedule named `name` (so the application sees and
 * can stop it), unref'd: it never keeps the process alive on its own.
 */
export function scheduleInterval(scheduler: SchedulerRegistry, name: string, ms: number, tick: () => void): void {
  const timer = setInterval(tick, ms);
  timer.unref();
  scheduler.addInterval(name, timer);
}

/** Stops the interval `name` if it runs (an instance whose worker is off never started it). */
export function stopInterval(scheduler: SchedulerRegistry, name: string): void {
  if (scheduler.doesExist('interval', name)) scheduler.deleteInterval(name);
}
