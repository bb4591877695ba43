import type { ActorOptions } from '../interfaces';
import type { RunControlRepository } from '../persistence/run-control.repository';
import { actorOf } from './actor';
import { knownRunId } from './run-id';

/**
 * An operator's resume, as WorkflowClient.resume and the dashboard make it: whether the run was made due
 * now (a `resumed` recorded), false when there was nothing to end (the run pending, running, or waiting
 * but due already: a sleep past its deadline, not yet met, is left to meet it).
 */
export async function resumeRun(control: RunControlRepository, runId: unknown, opts: ActorOptions): Promise<boolean> {
  return (await control.resume(knownRunId(runId), actorOf(opts))).changed.length > 0;
}
