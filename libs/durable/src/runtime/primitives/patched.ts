import { checkName } from '../../schema/define-signal';
import { deserialize, serialize } from '../../schema/serializer';
import { Execution, never } from '../execution';

/**
 * Whether this run takes the code path a deploy added at this point: true when it reaches the point
 * with no checkpoint recorded past it yet (a new run, or an old one that had not got this far), false
 * when an earlier execution, of the older code, recorded checkpoints this one has not reached yet.
 * Journaled on first encounter (`patch:<id>`), so the answer never changes for the run.
 */
export async function patched(execution: Execution, id: string): Promise<boolean> {
  if (!execution.isActive) return never();
  await execution.enter('patched');
  checkName(id, 'patch');
  const key = `patch:${id}`;
  const stored = execution.journal.steps.get(key);
  if (stored) return deserialize<boolean>(stored.result);
  const taken = execution.journal.steps.unreached().length === 0;
  const kept = await execution.checkpoint(key, 'patch', { outcome: 'ok', result: serialize(taken, 'a patch decision'), error: null }, null);
  return deserialize<boolean>(kept.result);
}
