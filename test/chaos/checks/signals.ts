import { Check, sameJson, SLACK_MS, startedRuns } from './check';
import { deserialize, Violation } from './data';

/**
 * A signal is applied once, the first payload wins, and none is lost: every delivery the library
 * accepted is stored; at most one delivery per (run, name) is accepted; the run used the stored
 * payload; and a run that timed out had no signal stored before its deadline.
 */
export const checkSignals: Check = (e) => {
  const violations: Violation[] = [];
  let lost = 0;
  let received = 0;
  let timedOut = 0;
  let deliveries = 0;
  const fail = (runId: string, message: string, isLost = false) => {
    if (isLost) lost++;
    violations.push({ check: 'signals', runId, message });
  };
  for (const runId of startedRuns(e)) {
    if (e.runs.get(runId)?.status !== 'completed') continue; // reported by the terminal check
    const sent = e.deliveries.filter((d) => d.runId === runId && d.kind === 'signal');
    deliveries += sent.length;
    const accepted = sent.filter((d) => d.outcome === 'accepted');
    const stored = e.signals.get(runId);
    const storedPayload = stored && deserialize<Record<string, unknown>>(stored.payload);
    if (accepted.length > 1)
      fail(runId, `the signal was accepted ${accepted.length} times (copies ${accepted.map((d) => d.payload.copy).join(', ')})`);
    if (accepted.length && !stored)
      fail(runId, `a delivery was accepted at ${new Date(accepted[0].doneAt).toISOString()} but no signal is stored`, true);
    if (accepted.length && stored && !sameJson(storedPayload, accepted[0].payload))
      fail(runId, `stored payload ${JSON.stringify(storedPayload)} is not the accepted one ${JSON.stringify(accepted[0].payload)}`);
    const journaled = (e.history.get(runId) ?? []).filter((h) => h.event === 'signal-delivered' && h.detail?.name === 'approval').length;
    if (journaled > 1) fail(runId, `signal-delivered is in the history ${journaled} times`);

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
      received++;
      if (!stored) fail(runId, 'the run used a signal that is not stored');
      else if (!sameJson(applied.detail.payload, storedPayload))
        fail(runId, `the run used payload ${JSON.stringify(applied.detail.payload)}, not the first one ${JSON.stringify(storedPayload)}`);
      continue;
    }
    timedOut++;
    if (!steps?.has('signal-deadline:approval:timed-out'))
      fail(runId, 'the run went on without the signal and without a timeout checkpoint');
    const deadline = deserialize<Date>(steps?.get('signal-deadline:approval')?.result ?? null);
    if (stored && deadline && stored.delivered_at.getTime() < deadline.getTime() - SLACK_MS) {
      fail(
        runId,
        `lost: delivered at ${stored.delivered_at.toISOString()}, before the deadline ${deadline.toISOString()}, yet the run timed out`,
        true,
      );
    }
  }
  return { violations, metrics: { lost, received, timedOut, deliveries } };
};

export function effectId(result: string | null | undefined): number | undefined {
  if (!result) return undefined;
  return deserialize<{ ledgerId?: number }>(result)?.ledgerId;
}
