import { RunNotFoundError } from '../errors';
import { isStorableText, storableText } from '../schema/define-signal';

/** An id that cannot be stored cannot name a run: refused as unknown before it reaches SQL. */
export function knownRunId(runId: unknown): string {
  if (typeof runId !== 'string' || runId.length === 0 || runId.length > 10_000 || !isStorableText(runId)) {
    throw new RunNotFoundError(typeof runId === 'string' ? storableText(runId.slice(0, 200)) : String(runId));
  }
  return runId;
}
