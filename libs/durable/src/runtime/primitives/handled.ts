/**
 * A durable wait's promise, marked handled. The engine rejects a wait the workflow may hold without
 * awaiting it yet (the run's deadline thrown at a `waitForSignal` or `child.result()` kept in a variable for
 * the cleanup): Node would take that for an unhandled rejection and stop the process, every run on it,
 * and again at each re-execution. The workflow still gets the error where it awaits the promise.
 */
export function handled<T>(wait: Promise<T>): Promise<T> {
  wait.catch(() => undefined);
  return wait;
}
