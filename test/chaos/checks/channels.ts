import { Check } from './check';
import { storedEffect, Violation } from './data';

/**
 * Each channel message is handled once and in order: every message the library accepted is stored
 * once with a gap-free seq, handled by a checkpointed step (whose effect saw that seq) and acked; the
 * handling steps committed in seq order; the closing message stays un-acked.
 */
export const checkChannels: Check = (e) => {
  const violations: Violation[] = [];
  let lost = 0;
  let handled = 0;
  let deliveries = 0;
  const fail = (runId: string, message: string, isLost = false) => {
    if (isLost) lost++;
    violations.push({ check: 'channels', runId, message });
  };
  for (const start of e.starts.filter((s) => s.ok)) {
    const runId = start.runId;
    if (e.runs.get(runId)?.status !== 'completed') continue;
    const stored = e.messages.get(runId) ?? [];
    const byKey = new Map(stored.map((m) => [m.key, m]));
    stored.forEach((m, i) => m.seq !== i + 1 && fail(runId, `seq ${m.seq} at position ${i + 1}: the channel has a gap`));
    const sent = e.deliveries.filter((d) => d.runId === runId && d.kind === 'message');
    deliveries += sent.length;
    for (const key of [...start.messages, 'close']) {
      const accepted = sent.filter((d) => d.key === key && d.outcome === 'accepted');
      if (accepted.length > 1) fail(runId, `message ${key} was accepted ${accepted.length} times`);
      if (accepted.length && !byKey.has(key)) fail(runId, `message ${key} was accepted but is not stored`, true);
      const journaled = (e.history.get(runId) ?? []).filter((h) => h.event === 'message-sent' && h.detail?.key === key).length;
      if (journaled > 1) fail(runId, `message-sent ${key} is in the history ${journaled} times`);
    }
    const close = byKey.get('close');
    if (!close) fail(runId, 'the closing message is not stored', true);
    else if (close.acked_at) fail(runId, 'the closing message was acked');
    let lastCommit = 0;
    for (const m of stored.filter((m) => m.key !== 'close')) {
      if (close && m.seq > close.seq) continue; // came after the close: never meant to be handled
      const step = e.steps.get(runId)?.get(`handle:${m.key}`);
      const effect = storedEffect(step);
      const row =
        effect &&
        e.ledger
          .get(runId)
          ?.get(`handle:${m.key}`)
          ?.find((l) => l.id === effect.ledgerId);
      if (!step || !row) {
        fail(runId, `message ${m.key} (seq ${m.seq}) was never handled`, true);
        continue;
      }
      handled++;
      if (row.detail.seq !== m.seq) fail(runId, `message ${m.key} was handled as seq ${row.detail.seq}, stored as seq ${m.seq}`);
      if (!m.acked_at) fail(runId, `message ${m.key} was handled but never acked`);
      if (step.committedAt <= lastCommit) fail(runId, `message ${m.key} (seq ${m.seq}) was handled before the message ahead of it`);
      lastCommit = step.committedAt;
    }
  }
  return { violations, metrics: { lost, handled, deliveries } };
};
