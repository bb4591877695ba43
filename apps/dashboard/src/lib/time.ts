import { serverNow } from './clock';

// Every instant the dashboard shows goes through here: in the operator's time zone (the browser's),
// with the UTC instant on hover (components/time-text.tsx). Formats come from Intl, so the zone rules
// are the platform's own, never a table of ours.

/**
 * The operator's IANA zone, as the browser reported it when the page loaded ("Europe/Paris"). Read once:
 * every time shown asks for it, and a new Intl.DateTimeFormat per call made a 1,000-row journal take a
 * fifth of a second longer.
 */
const OPERATOR_ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
export function operatorZone(): string {
  return OPERATOR_ZONE;
}

const SORTABLE: Intl.DateTimeFormatOptions = {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
};
const parts = new Intl.DateTimeFormat('en-US', SORTABLE);
const utcParts = new Intl.DateTimeFormat('en-US', { ...SORTABLE, timeZone: 'UTC' });
const offsetFormat = new Intl.DateTimeFormat('en-US', { timeZoneName: 'longOffset' });
const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
const dayTimeFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

function valid(iso: string): Date | undefined {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** 'YYYY-MM-DD HH:mm:ss' as `format` reads the instant: unambiguous and sortable. */
function sortable(date: Date, format: Intl.DateTimeFormat): string {
  const part = Object.fromEntries(format.formatToParts(date).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second}`;
}

/** "2024-03-03 14:05:12" in the operator's zone. */
export function formatTimestamp(iso: string): string {
  const date = valid(iso);
  return date ? sortable(date, parts) : iso;
}

/** "14:05" today, "Mar 3, 14:05" on another day, in the operator's zone. */
export function formatClock(iso: string): string {
  const date = valid(iso);
  if (!date) return iso;
  const sameDay = date.toDateString() === new Date(serverNow()).toDateString();
  return sameDay ? timeFormat.format(date) : dayTimeFormat.format(date);
}

const clockFormats = {
  minute: timeFormat,
  second: new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }),
  millisecond: new Intl.DateTimeFormat(undefined, {
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    fractionalSecondDigits: 3,
    hourCycle: 'h23',
  }),
};

/**
 * The time of day in the operator's zone, to the unit a scale needs: "14:05", "14:05:12",
 * "14:05:12.345" (a timeline's ticks over an hour, a minute, a second).
 */
export function formatTimeOfDay(iso: string, unit: keyof typeof clockFormats): string {
  const date = valid(iso);
  return date ? clockFormats[unit].format(date) : iso;
}

/** "2024-03-03 13:05:12 UTC": the instant itself. */
export function formatUtc(iso: string): string {
  const date = valid(iso);
  return date ? `${sortable(date, utcParts)} UTC` : iso;
}

/** "UTC+01:00" (or "UTC"): the operator's offset at that instant, which daylight saving moves. */
function offsetAt(date: Date): string {
  const name = offsetFormat.formatToParts(date).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  return name.replace(/^GMT/, 'UTC');
}

/**
 * The hover text of a shown time: the local timestamp with its zone and offset, then the UTC
 * instant, exact to the millisecond as the server sent it. `note` goes first ("Run deadline").
 *
 *   2024-03-03 14:05:12 Europe/Paris (UTC+01:00)
 *   2024-03-03 13:05:12 UTC · 2024-03-03T13:05:12.345Z
 */
export function timeTitle(iso: string, note?: string): string {
  const date = valid(iso);
  if (!date) return iso;
  const zone = operatorZone();
  const offset = offsetAt(date);
  const local = zone === 'UTC' || zone === 'Etc/UTC' ? undefined : `${formatTimestamp(iso)} ${zone} (${offset})`;
  return [note, local, `${formatUtc(iso)} · ${date.toISOString()}`].filter(Boolean).join('\n');
}
