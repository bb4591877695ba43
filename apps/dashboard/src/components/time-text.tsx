import { formatClock, formatTimestamp, relative } from '../lib/format';

type Mode = 'relative' | 'clock' | 'timestamp';

/** A server time, in the form asked for, with the exact local timestamp and ISO value on hover. */
export function TimeText({ iso, mode = 'relative', now }: { iso: string | null | undefined; mode?: Mode; now?: number }) {
  if (!iso) return <span className="muted">—</span>;
  const text = mode === 'clock' ? formatClock(iso) : mode === 'timestamp' ? formatTimestamp(iso) : relative(iso, now);
  return (
    <time dateTime={iso} title={`${formatTimestamp(iso)} (${iso})`}>
      {text}
    </time>
  );
}
