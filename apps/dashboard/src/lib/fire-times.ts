import { formatSpan } from './format';

// A schedule's next fire times, each with its UTC offset in the schedule's zone, so a change of
// offset between two of them (a daylight-saving transition) can be marked. The offsets come from the
// platform's own time zone data through Intl.DateTimeFormat, never from tables of our own.

/** A fire time and the offset of the schedule's zone at that instant. */
export interface FireTime {
  iso: string;
  /** Minutes east of UTC in the schedule's zone (Paris in summer: 120). */
  offset?: number;
  /** Set when the offset differs from the previous fire time's (or, for the first, from now's). */
  shift?: { from: number; to: number };
}

const formats = new Map<string, Intl.DateTimeFormat | null>();

/** A cached formatter in `timeZone`; null for a zone this platform does not know (the server knew it). */
function zoneFormat(timeZone: string, kind: 'offset' | 'clock'): Intl.DateTimeFormat | null {
  const key = `${kind} ${timeZone}`;
  if (!formats.has(key)) {
    const options: Intl.DateTimeFormatOptions =
      kind === 'offset'
        ? { timeZone, timeZoneName: 'longOffset' }
        : { timeZone, month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
    try {
      formats.set(key, new Intl.DateTimeFormat('en-US', options));
    } catch {
      formats.set(key, null); // RangeError: unknown zone
    }
  }
  return formats.get(key)!;
}

/** The UTC offset of `instant` in `timeZone`, in minutes; undefined for a zone this platform does not know. */
export function utcOffsetMinutes(instant: Date, timeZone: string): number | undefined {
  const format = zoneFormat(timeZone, 'offset');
  if (!format) return undefined;
  // 'GMT+02:00', 'GMT-03:30', and 'GMT' (or 'GMT+00:00') for UTC itself.
  const name = format.formatToParts(instant).find((part) => part.type === 'timeZoneName')?.value;
  const match = /^GMT(?:([+-])(\d{1,2})(?::(\d{2}))?)?$/.exec(name ?? '');
  if (!match?.[1]) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === '-' ? -minutes : minutes;
}

/**
 * The fire times with their offsets, each compared with the one before it; the first is compared
 * with the offset at `since` (now), so a transition before the next slot is marked too. A zone this
 * browser does not know gives the list without offsets or marks.
 */
export function markFireTimes(isos: readonly string[], timeZone: string, since: Date): FireTime[] {
  let previous = utcOffsetMinutes(since, timeZone);
  return isos.map((iso) => {
    const offset = utcOffsetMinutes(new Date(iso), timeZone);
    const shift = offset === undefined || previous === undefined || offset === previous ? undefined : { from: previous, to: offset };
    previous = offset;
    return shift ? { iso, offset, shift } : { iso, offset };
  });
}

/** "UTC+02:00", "UTC-05:00", "UTC". */
export function formatOffset(minutes: number): string {
  if (minutes === 0) return 'UTC';
  const abs = Math.abs(minutes);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `UTC${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** "clocks go forward 1 h", "clocks go back 30 min". */
export function describeShift({ from, to }: { from: number; to: number }): string {
  return `clocks go ${to > from ? 'forward' : 'back'} ${formatSpan((to - from) * 60_000)}`;
}

/** "Mar 29, 03:00" as the clocks of `timeZone` read it (the ISO instant for a zone this platform does not know). */
export function formatInZone(iso: string, timeZone: string): string {
  return zoneFormat(timeZone, 'clock')?.format(new Date(iso)) ?? iso;
}
