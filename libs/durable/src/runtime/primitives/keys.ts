import { InvalidArgumentError } from '../../errors';
import { checkKeys, MAX_KEYS } from '../../schema/business-keys';
import { SET_KEYS } from '../checkpoint-keys';
import { Execution, never } from '../execution';

/**
 * Adds or replaces business keys of the run, journaled once (`set-keys`, `#2`… for repeats): a
 * re-execution finds its step and writes nothing, so keys set later are never undone by a replay.
 */
export async function setKeys(execution: Execution, keys: Record<string, string>): Promise<void> {
  if (!execution.isActive) return never();
  await execution.enter('setKeys');
  const checked = checkKeys(keys, 'ctx.setKeys()', true);
  const key = execution.keyFor(SET_KEYS);
  if (execution.journal.steps.has(key)) return;
  const encoded = JSON.stringify(checked);
  const written = await execution.deps.journal.setKeys(execution.runId, execution.lease.token, key, encoded, MAX_KEYS);
  if (written === false) return execution.lose();
  if (written === 'too-many')
    throw new InvalidArgumentError(`ctx.setKeys() would give run "${execution.runId}" more than ${MAX_KEYS} keys; nothing was set.`);
  execution.journal.steps.set(key, { kind: 'set-keys', outcome: 'ok', result: encoded, error: null });
}
