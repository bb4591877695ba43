import { Check } from './check';
import { deserialize, storedEffect, Violation } from './data';

/**
 * Starts and signals made with `{ manager }` commit or roll back with the application's transaction.
 * A committed business row always has its durable record (the run, the stored signal) and a run
 * started that way always has its business row; a transaction rolled back on purpose leaves neither:
 * no business row, no run, no history, and its signal is never stored nor used by the run.
 */
export const checkTransactions: Check = (e) => {
  const violations: Violation[] = [];
  const fail = (runId: string, message: string) => violations.push({ check: 'transactions', runId, message });
  const metrics = { txStarts: 0, txSignals: 0, rolledBackStarts: 0, rolledBackSignals: 0 };
  for (const start of e.starts.filter((s) => s.startVia === 'tx')) {
    metrics.txStarts++;
    const row = e.business.has(`start:${start.runId}`);
    const run = e.runs.has(start.runId);
    if (start.ok && !row) fail(start.runId, 'the start in a transaction was answered, but its business row is not there');
    if (row !== run)
      fail(start.runId, row ? 'the business row committed without its run' : 'the run exists without the business row of its transaction');
  }
  for (const r of e.rollbacks) {
    metrics.rolledBackStarts++;
    if (e.business.has(`start:${r.runId}`)) fail(r.runId, 'the business row of a rolled-back start is there');
    if (e.runs.has(r.runId) || e.history.has(r.runId)) fail(r.runId, 'a start rolled back with its transaction left a run behind');
    if (e.ledger.has(r.runId)) fail(r.runId, 'a start rolled back with its transaction was executed all the same');
  }
  for (const key of e.business) {
    const [kind, ...rest] = key.split(':');
    if (kind !== 'signal') continue;
    const runId = rest.slice(0, -2).join(':');
    metrics.txSignals++;
    if (!e.signals.has(runId)) fail(runId, `business row ${key} committed, but the run has no signal stored`);
  }
  for (const d of e.deliveries.filter((d) => d.tx === 'rollback')) {
    metrics.rolledBackSignals++;
    if (e.business.has(`signal:${d.runId}:${d.sender}:${d.payload.copy}`))
      fail(d.runId, `the business row of a rolled-back signal (sender ${d.sender}) is there`);
  }
  for (const [runId, signal] of e.signals) {
    if (isRolledBack(deserialize(signal.payload))) fail(runId, `the stored signal is a rolled-back one: ${signal.payload}`);
    const applied = storedEffect(e.steps.get(runId)?.get('apply-approval'));
    const row =
      applied &&
      e.ledger
        .get(runId)
        ?.get('apply-approval')
        ?.find((l) => l.id === applied.ledgerId);
    if (isRolledBack(row?.detail.payload)) fail(runId, `the run used a rolled-back signal: ${JSON.stringify(row!.detail.payload)}`);
  }
  return { violations, metrics };
};

function isRolledBack(payload: unknown): boolean {
  const by = (payload as { by?: unknown } | null | undefined)?.by;
  return typeof by === 'string' && by.startsWith('rollback-');
}
