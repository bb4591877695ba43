import { Check, sameJson, SLACK_MS } from './check';
import { deserialize, Violation } from './data';
import { answersOf, settleKey, startedPlans } from './deliveries';

/**
 * A signal is applied once, the first payload wins, and none is lost. Every planned copy of every
 * run the driver started is held to its answer (deliveries.ts `settleKey`): the signal ends stored
 * exactly once (one `signal-delivered`), or every copy was refused for a reason the history confirms.
 * A run planned without a signal has none stored and uses none. A completed run used the stored
 * payload, and a run that timed out had no signal stored before its deadline.
 */
export const checkSignals: Check = (e) => {
  const violations: Violation[] = [];
  const metrics = { lost: 0, received: 0, timedOut: 0, deliveries: 0, refused: 0 } as Record<string, number>;
  const fail = (runId: string, message: string) => violations.push({ check: 'signals', runId, message });
  const answers = answersOf(e);
  for (const run of startedPlans(e)) {
    const runId = run.id;
    const row = e.signals.get(runId);
    const journaled = (e.history.get(runId) ?? []).filter((h) => h.event === 'signal-delivered' && h.detail?.name === 'approval');
    const storedPayload = row && deserialize<Record<string, unknown>>(row.payload);
    const fate = settleKey(e, answers, run, 'signal', 'approval', row && { at: journaled[0]?.committedAt, payload: storedPayload });
    metrics.deliveries += fate.copies;
    metrics.refused += fate.refused;
    if (fate.lost) metrics.lost++;
    fate.problems.forEach((p) => fail(runId, p));
    if (journaled.length > 1) fail(runId, `signal-delivered is in the history ${journaled.length} times`);

    if (e.runs.get(runId)?.status !== 'completed') continue; // what it used is read from a completed run only
    const steps = e.steps.get(runId);
    const applied = e.ledger
      .get(runId)
      ?.get('apply-approval')
      ?.find((l) => l.id === effectId(steps?.get('apply-approval')?.result));
    if (!applied) {
      fail(runId, 'apply-approval has no effect that its checkpoint names');
      continue;
    }
    if (applied.detail.received) {
      metrics.received++;
      metrics[`received.${run.signalMode}`] = (metrics[`received.${run.signalMode}`] ?? 0) + 1;
      if (run.signalMode === 'none')
        fail(runId, `the run was planned without a signal, yet it used ${JSON.stringify(applied.detail.payload)}`);
      if (!row) fail(runId, 'the run used a signal that is not stored');
      else if (!sameJson(applied.detail.payload, storedPayload))
        fail(runId, `the run used payload ${JSON.stringify(applied.detail.payload)}, not the first one ${JSON.stringify(storedPayload)}`);
      continue;
    }
    metrics.timedOut++;
    metrics[`timedOut.${run.signalMode}`] = (metrics[`timedOut.${run.signalMode}`] ?? 0) + 1;
    if (!steps?.has('signal-deadline:approval:timed-out'))
      fail(runId, 'the run went on without the signal and without a timeout checkpoint');
    const deadline = deserialize<Date>(steps?.get('signal-deadline:approval')?.result ?? null);
    if (row && deadline && row.delivered_at.getTime() < deadline.getTime() - SLACK_MS) {
      metrics.lost++;
      fail(
        runId,
        `lost: delivered at ${row.delivered_at.toISOString()}, before the deadline ${deadline.toISOString()}, yet the run timed out`,
      );
    }
  }
  return { violations, metrics };
};

export function effectId(result: string | null | undefined): number | undefined {
  if (!result) return undefined;
  return deserialize<{ ledgerId?: number }>(result)?.ledgerId;
}
