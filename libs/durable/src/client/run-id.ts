import { v7 } from 'uuid';
import { InvalidArgumentError, RunNotFoundError } from '../errors';
import { isStorableText, storableText } from '../schema/define-signal';

/**
 * The id of a run started without one: a version 7 UUID, whose leading 48 bits are the time in
 * milliseconds, so a new run's key lands at the right edge of the runs table's primary key and of the
 * journal's run_id indexes instead of at a random page of each: fewer pages touched per workflow, and
 * fewer full-page images in the WAL after a checkpoint (docs/architecture.md, "Run ids").
 */
export const generatedRunId = (): string => v7();

/** The id a new run gets: the caller's, checked (newRunId), or a generated one, which needs no check. */
export function runIdOf(given: unknown, derived = false): string {
  return given === undefined || given === null ? generatedRunId() : newRunId(given, derived);
}

/** An id that cannot be stored cannot name a run: refused as unknown before it reaches SQL. */
export function knownRunId(runId: unknown): string {
  if (typeof runId !== 'string' || runId.length === 0 || runId.length > 10_000 || !isStorableText(runId)) {
    throw new RunNotFoundError(typeof runId === 'string' ? storableText(runId.slice(0, 200)) : String(runId));
  }
  return runId;
}

/** An id for a new run, as a caller gives it: InvalidArgumentError unless it can be stored (derived child ids may be longer). */
function newRunId(runId: unknown, derived = false): string {
  if (typeof runId !== 'string' || runId.length === 0 || (runId.length > 200 && !derived) || !isStorableText(runId)) {
    throw new InvalidArgumentError(
      `runId must be a non-empty string of at most 200 characters, without NUL or lone surrogates; got ${typeof runId === 'string' ? `${runId.length} characters` : typeof runId}.`,
    );
  }
  return runId;
}
