/**
 * A durable call's promise (a wait, a step, a child's result), marked handled. The engine rejects calls
 * the workflow may hold without awaiting them yet (the run's deadline thrown at a `waitForSignal` kept in a
 * variable for the cleanup; a step in its retry's backoff when the run parks on another call): Node would take
 * that for an unhandled rejection and stop the process, every run on it, and again at each re-execution.
 * The workflow still gets the error where it awaits the promise.
 */
export function handled<T>(wait: Promise<T>): Promise<T> {
  wait.catch(() => undefined);
  return wait;
}
