import { Check } from './check';
import { deserialize, MessageRow, storedEffect, Violation } from './data';
import { answersOf, settleKey, startedPlans } from './deliveries';

/**
 * Each channel message is handled once and in order, and none is lost. Every planned copy of every
 * message of every run the driver started is held to its answer (deliveries.ts `settleKey`): each key
 * ends stored exactly once (one row, one `message-sent`), or every copy was refused for a reason the
 * history confirms; seqs are gap-free. A completed run has every planned key stored (the closing
 * message went out after every data message was answered, and a run ends only on it), each data
 * message before the close, handled by a checkpointed step whose effect saw its seq, and acked; the
 * handling steps committed in seq order; the closing message stays un-acked.
 */
export const checkChannels: Check = (e) => {
  const violations: Violation[] = [];
  const metrics = { lost: 0, handled: 0, deliveries: 0, refused: 0 };
  const fail = (runId: string, message: string) => violations.push({ check: 'channels', runId, message });
  const answers = answersOf(e);
  for (const run of startedPlans(e)) {
    const runId = run.id;
    const stored = e.messages.get(runId) ?? [];
    stored.forEach((m, i) => m.seq !== i + 1 && fail(runId, `seq ${m.seq} at position ${i + 1}: the channel has a gap`));
    const rows = new Map<string, MessageRow[]>();
    for (const m of stored) rows.set(m.key, [...(rows.get(m.key) ?? []), m]);
    const completed = e.runs.get(runId)?.status === 'completed';
    const history = e.history.get(runId) ?? [];
    for (const key of [...run.messages, 'close']) {
      const [row, ...more] = rows.get(key) ?? [];
      if (more.length) fail(runId, `message ${key} is stored ${more.length + 1} times`);
      const journaled = history.filter((h) => h.event === 'message-sent' && h.detail?.channel === 'events' && h.detail?.key === key);
      if (journaled.length > 1) fail(runId, `message-sent ${key} is in the history ${journaled.length} times`);
      const fate = settleKey(e, answers, run, 'message', key, row && { at: journaled[0]?.committedAt, payload: deserialize(row.payload) });
      metrics.deliveries += fate.copies;
      metrics.refused += fate.refused;
      fate.problems.forEach((p) => fail(runId, p));
      if (fate.lost || (completed && !row)) {
        metrics.lost++;
        if (!fate.lost) fail(runId, `lost: message ${key} was never stored, yet the run completed`);
      }
    }
    if (!completed) continue;
    const close = rows.get('close')?.[0];
    if (close?.acked_at) fail(runId, 'the closing message was acked');
    const closeSent = Math.min(
      ...e.deliveries.filter((d) => d.runId === runId && d.kind === 'message' && d.key === 'close').map((d) => d.sentAt),
    );
    let lastCommit = 0;
    for (const m of stored.filter((m) => m.key !== 'close')) {
      if (close && m.seq > close.seq) {
        // Never meant to be handled; but a message answered before the close went out must be ahead of it.
        const answeredAt = e.deliveries
          .filter(
            (d) => d.runId === runId && d.kind === 'message' && d.key === m.key && (d.outcome === 'accepted' || d.outcome === 'duplicate'),
          )
          .reduce((min, d) => Math.min(min, d.doneAt), Infinity);
        if (answeredAt < closeSent)
          fail(
            runId,
            `message ${m.key} (seq ${m.seq}) was answered before the close went out, yet it is stored after it (seq ${close.seq})`,
          );
        continue;
      }
      const step = e.steps.get(runId)?.get(`handle-${m.key}`);
      const effect = storedEffect(step);
      const row =
        effect &&
        e.ledger
          .get(runId)
          ?.get(`handle-${m.key}`)
          ?.find((l) => l.id === effect.ledgerId);
      if (!step || !row) {
        metrics.lost++;
        fail(runId, `lost: message ${m.key} (seq ${m.seq}) was never handled`);
        continue;
      }
      metrics.handled++;
      if (row.detail.seq !== m.seq) fail(runId, `message ${m.key} was handled as seq ${row.detail.seq}, stored as seq ${m.seq}`);
      if (!m.acked_at) fail(runId, `message ${m.key} was handled but never acked`);
      if (step.committedAt <= lastCommit) fail(runId, `message ${m.key} (seq ${m.seq}) was handled before the message ahead of it`);
      lastCommit = step.committedAt;
    }
  }
  return { violations, metrics };
};
