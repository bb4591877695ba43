import { elapsed, formatCountdown, formatSpan } from '../lib/format';
import { useNow } from '../lib/use-now';
import styles from './deadline-countdown.module.css';
import { TimeText } from './time-text';

/**
 * A run's deadline counted down every second on the server's clock ("in 4 min 12 s", "passed 30 s
 * ago"), marked once passed, the instant on hover. `compact` is the runs list's pill: a stopwatch and
 * "in 12 min" (drawn, not an emoji: a browser without an emoji font shows a box).
 * Test hook: `deadline-countdown`, with `data-passed` once passed.
 */
export function DeadlineCountdown({ iso, compact = false }: { iso: string; compact?: boolean }) {
  const ms = elapsed(iso, useNow());
  const passed = ms >= 0;
  const span = compact ? formatSpan(ms) : formatCountdown(Math.abs(ms));
  const classes = [compact ? styles.pill : styles.plain, passed ? styles.passed : ''].filter(Boolean).join(' ');
  return (
    <TimeText iso={iso} note="Run deadline" className={classes} data-testid="deadline-countdown" data-passed={passed || undefined}>
      {compact && <Stopwatch />}
      {passed ? `passed ${span} ago` : `in ${span}`}
    </TimeText>
  );
}

function Stopwatch() {
  return (
    <svg className={styles.icon} viewBox="0 0 16 16" aria-hidden="true">
      <circle cx="8" cy="9" r="5.5" fill="none" stroke="currentColor" strokeWidth="1.5" />
      <path d="M8 9V6.5M6.5 1.75h3" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
    </svg>
  );
}
