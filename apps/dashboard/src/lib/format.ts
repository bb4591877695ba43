import { serverNow } from './clock';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A coarse span for people: "40 s", "5 min", "3 h", "2 d". */
export function formatSpan(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < MINUTE) return `${Math.floor(abs / SECOND)} s`;
  if (abs < HOUR) return `${Math.floor(abs / MINUTE)} min`;
  if (abs < 2 * DAY) return `${Math.floor(abs / HOUR)} h`;
  return `${Math.floor(abs / DAY)} d`;
}

/** A configured span, exact: "1 min 30 s", "1 h", "250 ms" (a sub-second part in ms). */
export function formatExactSpan(ms: number): string {
  if (ms % SECOND !== 0) return `${ms} ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, name] of [
    [DAY, 'd'],
    [HOUR, 'h'],
    [MINUTE, 'min'],
    [SECOND, 's'],
  ] as const) {
    if (rest >= unit) parts.push(`${Math.floor(rest / unit)} ${name}`);
    rest %= unit;
  }
  return parts.join(' ') || '0 s';
}

/** A countdown, to the second near its end: "12 s", "4 min 12 s", "2 h 5 min", "3 d 4 h". */
export function formatCountdown(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / SECOND));
  const [d, h, m] = [Math.floor(s / 86_400), Math.floor(s / 3_600) % 24, Math.floor(s / 60) % 60];
  if (d) return h ? `${d} d ${h} h` : `${d} d`;
  if (h) return m ? `${h} h ${m} min` : `${h} h`;
  if (m) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  return `${s} s`;
}

/** A step's duration: "120 ms", "1.4 s", then coarse spans. */
export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '—';
  if (ms < SECOND) return `${Math.round(ms)} ms`;
  if (ms < MINUTE) return `${(ms / SECOND).toFixed(1)} s`;
  return formatSpan(ms);
}

/** Milliseconds from `iso` to now on the server's clock (positive: in the past). */
export function elapsed(iso: string, now = serverNow()): number {
  return now - Date.parse(iso);
}

/** "3 h ago" or "in 21 h". */
export function relative(iso: string, now = serverNow()): string {
  const ms = elapsed(iso, now);
  return ms >= 0 ? `${formatSpan(ms)} ago` : `in ${formatSpan(ms)}`;
}

/** "1 run", "3 runs". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/**
 * An id split to be shown in `max` characters with its middle dropped: ["7f3a2c91", "-1b2c-…", "c3d4e5f6/review"].
 * Ids of related runs share their beginning (a child is `<parent>/<step>`, a business id
 * `order-17-…`), so the end is what tells siblings apart; the beginning says which family. The middle
 * is '' when the id fits.
 */
export function elideMiddle(id: string, max = 28): [head: string, middle: string, tail: string] {
  const chars = [...id];
  if (chars.length <= max) return [id, '', ''];
  const head = Math.min(8, Math.floor((max - 1) / 3));
  const tail = chars.length - (max - head - 1);
  return [chars.slice(0, head).join(''), chars.slice(head, tail).join(''), chars.slice(tail).join('')];
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}

const BYTE_UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'] as const;

/** A size on disk in decimal units, by the platform's unit formatter: "8 kB", "405 MB", "1.2 GB". */
export function formatBytes(bytes: number): string {
  const exponent = Math.min(BYTE_UNITS.length - 1, bytes > 0 ? Math.floor(Math.log10(bytes) / 3) : 0);
  const value = bytes / 1000 ** exponent;
  return new Intl.NumberFormat('en', {
    style: 'unit',
    unit: BYTE_UNITS[exponent],
    unitDisplay: 'short',
    maximumFractionDigits: value < 10 ? 1 : 0,
  }).format(value);
}
