import type { RunStatus, WaitReason } from '../api/types';
import { serverNow } from '../lib/clock';
import { elapsed, formatClock, formatSpan, shortId } from '../lib/format';
import styles from './wait-reason-text.module.css';

interface WaitReasonTextProps {
  waiting: WaitReason | undefined;
  attempt?: number;
  maxAttempts?: number;
  /** The child's status, where known (a run's page knows its children, a list row does not). */
  childStatus?: RunStatus;
}

/**
 * What a run waits for, in words: "signal approval, 3 h, deadline in 21 h", "sleep until 14:05",
 * "child 7f3a… at step charge", "channel events, 5 min", "retry 3 of 5 at 14:02".
 * Past-due times are marked: a run due but not woken is what an operator looks for.
 */
export function WaitReasonText({ waiting, attempt, maxAttempts, childStatus }: WaitReasonTextProps) {
  if (!waiting) return <span className="muted">—</span>;
  const now = serverNow();
  const since = waiting.since ? `, ${formatSpan(elapsed(waiting.since, now))}` : '';
  switch (waiting.kind) {
    case 'signal':
      return (
        <span>
          signal <code>{waiting.name}</code>
          {since}
          {waiting.deadline && <Due iso={waiting.deadline} now={now} label="deadline" />}
        </span>
      );
    case 'sleep':
      return (
        <span title={`sleep step "${waiting.name}"`}>
          sleep until {formatClock(waiting.until)}
          <Overdue iso={waiting.until} now={now} />
        </span>
      );
    case 'channel':
      return (
        <span>
          channel <code>{waiting.channel}</code>
          {since}
        </span>
      );
    case 'child':
      return (
        <span title={waiting.childRunId}>
          child <span className="mono">{shortId(waiting.childRunId)}</span>
          {childStatus && ` (${childStatus})`} at step <code>{waiting.step}</code>
        </span>
      );
    case 'retry':
      return (
        <span title={`${waiting.error.name}: ${waiting.error.message}`}>
          retry {attempt ?? '?'}
          {maxAttempts !== undefined && ` of ${maxAttempts}`} at {formatClock(waiting.until)}
          <Overdue iso={waiting.until} now={now} />
        </span>
      );
  }
}

/** ", deadline in 21 h", or red once passed. */
function Due({ iso, now, label }: { iso: string; now: number; label: string }) {
  const ms = elapsed(iso, now);
  if (ms < 0) return <>, {label} in {formatSpan(ms)}</>;
  return <span className={styles.late}>, {label} passed {formatSpan(ms)} ago</span>;
}

/** " (due 3 min ago)" when a wake time has passed by more than a few seconds. */
function Overdue({ iso, now }: { iso: string; now: number }) {
  const ms = elapsed(iso, now);
  if (ms < 5_000) return null;
  return <span className={styles.late}> (due {formatSpan(ms)} ago)</span>;
}
