import type { HTMLAttributes, ReactNode } from 'react';
import { relative } from '../lib/format';
import { formatClock, formatTimestamp, timeTitle } from '../lib/time';

type Mode = 'relative' | 'clock' | 'timestamp';

interface TimeTextProps extends Omit<HTMLAttributes<HTMLElement>, 'title' | 'children'> {
  iso: string | null | undefined;
  /** "3 h ago" (default), "14:05", or "2024-03-03 14:05:12", all in the operator's zone. */
  mode?: Mode;
  now?: number;
  /** A first line for the hover text ("Run deadline"); the local and UTC instants follow. */
  note?: string;
  /** Text of the caller's own ("starts in 4 min") in place of the mode's. */
  children?: ReactNode;
  'data-testid'?: string;
}

/**
 * Every time the dashboard shows: in the operator's time zone, with the local timestamp, its zone and
 * the UTC instant on hover (lib/time.ts), and the ISO instant as the element's `datetime`.
 */
export function TimeText({ iso, mode = 'relative', now, note, children, ...props }: TimeTextProps) {
  if (!iso) return <span className="muted">—</span>;
  const text = children ?? (mode === 'clock' ? formatClock(iso) : mode === 'timestamp' ? formatTimestamp(iso) : relative(iso, now));
  return (
    <time {...props} dateTime={iso} title={timeTitle(iso, note)}>
      {text}
    </time>
  );
}
