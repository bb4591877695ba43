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

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayTimeFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** "14:05" today, "Mar 3, 14:05" on another day (local time). */
export function formatClock(iso: string): string {
  const date = new Date(iso);
  const sameDay = date.toDateString() === new Date(serverNow()).toDateString();
  return sameDay ? timeFormat.format(date) : dayTimeFormat.format(date);
}

/** "2024-03-03 14:05:12" in local time: unambiguous and sortable. */
export function formatTimestamp(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** "2024-03-03 13:05:12 UTC": the instant itself, for a tooltip beside a local time. */
export function formatUtc(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** "1 run", "3 runs". */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** "7f3a2c91…": enough of an id to tell runs apart in a sentence. */
export function shortId(id: string, length = 8): string {
  return id.length > length + 1 ? `${id.slice(0, length)}…` : id;
}

export function pretty(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? 'undefined';
}
