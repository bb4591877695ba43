import type { DeliveryRecord } from '../driver';
import type { PlannedDelivery, PlannedRun } from '../plan';
import { ORDER_MS, sameJson } from './check';
import type { Evidence } from './data';

/**
 * Every planned delivery, held to its fate: the signals and channels checks call `settleKey` for each
 * key (a signal's name, a message's key) of each run the driver started.
 */

/** A key as the library stored it: when its delivery committed (its history event; undefined: none) and its payload. */
export interface StoredKey {
  at: number | undefined;
  payload: unknown;
}

export interface KeyFate {
  stored: boolean;
  /** Never stored, though not every copy was refused for a reason the history confirms. */
  lost: boolean;
  /** Copies refused because the run had closed or been deleted, each confirmed by the history. */
  refused: number;
  /** Copies held to their answer. */
  copies: number;
  problems: string[];
}

/** The driver's answers, by copy: a copy is named by its run, kind, key and payload (`by`, `copy`). */
export type Answers = Map<string, DeliveryRecord[]>;

const copyId = (runId: string, kind: PlannedDelivery['kind'], key: string, payload: Record<string, unknown>) =>
  JSON.stringify([runId, kind, key, payload.by, payload.copy]);

export function answersOf(e: Evidence): Answers {
  const answers: Answers = new Map();
  for (const d of e.deliveries) {
    const id = copyId(d.runId, d.kind, d.key, d.payload);
    answers.set(id, [...(answers.get(id) ?? []), d]);
  }
  return answers;
}

/** The runs the schedule planned whose start the library answered: their deliveries went out. */
export function startedPlans(e: Evidence): PlannedRun[] {
  const started = new Set(e.starts.filter((s) => s.ok).map((s) => s.runId));
  return e.planned.filter((r) => started.has(r.id));
}

/** When the run closed (completed or cancelled: from then on the library refuses deliveries), by commit time. */
export function closedAt(e: Evidence, runId: string): number | undefined {
  return (e.history.get(runId) ?? []).find((h) => h.event === 'completed' || h.event === 'cancelled')?.committedAt;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What became of every planned copy of one key of a run (copies rolled back on purpose aside: see
 * transactions.ts). The key ends stored exactly once, or every copy was refused for a reason the
 * recorded history confirms. Each answer is verified:
 * - accepted: by one copy at most; the stored payload is that copy's;
 * - duplicate: the key was stored before the answer came;
 * - closed: the run had completed or been cancelled before the answer (by commit time);
 * - gone: retention had deleted the run before the answer;
 * - failed (no answer in the driver's 40 tries), or no answer recorded: a violation.
 * Whatever the answers, the stored payload is one a planned copy carried, stored while that copy was
 * in flight (between its first try and its answer), with its history event, and not after the run closed.
 */
export function settleKey(
  e: Evidence,
  answers: Answers,
  run: PlannedRun,
  kind: PlannedDelivery['kind'],
  key: string,
  stored: StoredKey | undefined,
): KeyFate {
  const copies = run.deliveries.filter((d) => d.kind === kind && d.key === key && d.tx !== 'rollback');
  const what = `${kind} ${key}`;
  const problems: string[] = [];
  const closed = closedAt(e, run.id);
  const deleted = e.runs.get(run.id)?.deleted_at?.getTime();
  const tally: Record<DeliveryRecord['outcome'] | 'unanswered', number> = {
    accepted: 0,
    duplicate: 0,
    closed: 0,
    gone: 0,
    rolledBack: 0,
    failed: 0,
    unanswered: 0,
  };
  let refused = 0;
  const accepted: Array<{ copy: PlannedDelivery; answer: DeliveryRecord }> = [];
  const answerOf = new Map<PlannedDelivery, DeliveryRecord>();
  for (const copy of copies) {
    const label = `${what} copy ${String(copy.payload.copy)} from ${String(copy.payload.by)}`;
    const records = answers.get(copyId(run.id, kind, key, copy.payload)) ?? [];
    if (records.length !== 1) {
      tally.unanswered++;
      problems.push(`${label} has ${records.length} answers recorded, not one (the driver never finished it)`);
      continue;
    }
    const [answer] = records;
    answerOf.set(copy, answer);
    tally[answer.outcome]++;
    switch (answer.outcome) {
      case 'accepted':
        accepted.push({ copy, answer });
        break;
      case 'duplicate':
        if (stored?.at !== undefined && stored.at > answer.doneAt + ORDER_MS)
          problems.push(`${label} was answered as a duplicate at ${iso(answer.doneAt)}, before the ${kind} was stored (${iso(stored.at)})`);
        break;
      case 'closed':
        if (closed !== undefined && closed <= answer.doneAt + ORDER_MS) refused++;
        else
          problems.push(
            `${label} was refused as closed at ${iso(answer.doneAt)}, but the run ${closed === undefined ? 'never closed' : `closed only at ${iso(closed)}`}`,
          );
        break;
      case 'gone':
        if (deleted !== undefined && deleted <= answer.doneAt + ORDER_MS) refused++;
        else
          problems.push(
            `${label} was refused as deleted at ${iso(answer.doneAt)}, but the run was ${deleted === undefined ? 'never deleted' : `deleted only at ${iso(deleted)}`}`,
          );
        break;
      case 'failed':
        problems.push(`${label} got no answer in ${answer.attempts} tries: ${answer.error ?? 'no error recorded'}`);
        break;
      case 'rolledBack':
        problems.push(`${label} was rolled back, though its transaction (if any) was meant to commit`);
        break;
    }
  }
  if (accepted.length > 1)
    problems.push(`${what} was accepted ${accepted.length} times (copies ${accepted.map((a) => String(a.copy.payload.copy)).join(', ')})`);
  if (stored) {
    const owner = copies.find((c) => sameJson(c.payload, stored.payload));
    const first = accepted[0];
    if (first && !sameJson(stored.payload, first.copy.payload))
      problems.push(
        `stored ${what} payload ${JSON.stringify(stored.payload)} is not the accepted one ${JSON.stringify(first.copy.payload)}`,
      );
    if (!owner) problems.push(`stored ${what} payload ${JSON.stringify(stored.payload)} is none that a planned copy carried`);
    if (stored.at === undefined) problems.push(`${what} is stored without its history event`);
    else {
      const flight = owner && answerOf.get(owner);
      if (flight && (stored.at < flight.sentAt - ORDER_MS || stored.at > flight.doneAt + ORDER_MS))
        problems.push(
          `${what} was stored at ${iso(stored.at)}, while the copy whose payload it holds was not in flight (sent ${iso(flight.sentAt)}, answered ${iso(flight.doneAt)})`,
        );
      if (closed !== undefined && stored.at > closed + ORDER_MS)
        problems.push(`${what} was stored at ${iso(stored.at)}, after the run closed at ${iso(closed)}`);
    }
  }
  const lost = !stored && refused < copies.length;
  if (lost) {
    const answered = Object.entries(tally)
      .filter(([, n]) => n > 0)
      .map(([outcome, n]) => `${outcome} ${n}`)
      .join(', ');
    problems.push(`lost: ${what} was never stored, yet not every copy was refused for a confirmed reason (answers: ${answered})`);
  }
  return { stored: !!stored, lost, refused, copies: copies.length, problems };
}
