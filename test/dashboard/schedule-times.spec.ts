import { describeCron } from '../../apps/dashboard/src/lib/cron-text';
import { describeShift, formatInZone, formatOffset, markFireTimes, utcOffsetMinutes } from '../../apps/dashboard/src/lib/fire-times';

// The Schedules page's pure helpers: the cron in words, and the daylight-saving marks on the next fire
// times (offsets from Intl, the platform's time zone data).

describe('schedule times in the dashboard', () => {
  it('reads the UTC offset of an instant in a zone, east positive, half hours included', () => {
    expect(utcOffsetMinutes(new Date('2026-01-15T12:00:00Z'), 'Europe/Paris')).toBe(60);
    expect(utcOffsetMinutes(new Date('2026-07-15T12:00:00Z'), 'Europe/Paris')).toBe(120);
    expect(utcOffsetMinutes(new Date('2026-07-15T12:00:00Z'), 'America/New_York')).toBe(-240);
    expect(utcOffsetMinutes(new Date('2026-07-15T12:00:00Z'), 'Asia/Kolkata')).toBe(330);
    expect(utcOffsetMinutes(new Date('2026-07-15T12:00:00Z'), 'UTC')).toBe(0);
    expect(utcOffsetMinutes(new Date('2026-07-15T12:00:00Z'), 'Mars/Olympus_Mons')).toBeUndefined();
  });

  it("marks the fire time after which the schedule's zone changes offset, in both directions", () => {
    // Daily 02:30 in Europe/Berlin across the March transition (croner's slots: the skipped hour runs at 03:00 CEST = 01:00Z).
    const march = ['2026-03-27T01:30:00Z', '2026-03-28T01:30:00Z', '2026-03-29T01:00:00Z', '2026-03-30T00:30:00Z', '2026-03-31T00:30:00Z'];
    const marked = markFireTimes(march, 'Europe/Berlin', new Date('2026-03-26T12:00:00Z'));
    expect(marked.map((f) => f.offset)).toEqual([60, 60, 120, 120, 120]);
    expect(marked.map((f) => f.shift)).toEqual([undefined, undefined, { from: 60, to: 120 }, undefined, undefined]);

    const october = ['2026-10-24T00:30:00Z', '2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z'];
    expect(markFireTimes(october, 'Europe/Berlin', new Date('2026-10-23T12:00:00Z')).map((f) => f.shift)).toEqual([
      undefined,
      undefined,
      { from: 120, to: 60 },
    ]);
  });

  it('marks the first fire time when the transition falls between now and it', () => {
    const [first] = markFireTimes(['2026-11-02T14:00:00Z'], 'America/New_York', new Date('2026-10-30T12:00:00Z'));
    expect(first.shift).toEqual({ from: -240, to: -300 });
  });

  it('marks nothing in a zone without daylight saving, nor in one this platform does not know', () => {
    const isos = ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z'];
    expect(markFireTimes(isos, 'UTC', new Date('2026-01-01T00:00:00Z')).filter((f) => f.shift)).toEqual([]);
    expect(markFireTimes(isos, 'Mars/Olympus_Mons', new Date('2026-01-01T00:00:00Z'))).toEqual(
      isos.map((iso) => ({ iso, offset: undefined })),
    );
  });

  it('words a shift and an offset for people', () => {
    expect(describeShift({ from: 60, to: 120 })).toBe('clocks go forward 1 h');
    expect(describeShift({ from: -240, to: -300 })).toBe('clocks go back 1 h');
    expect(describeShift({ from: 660, to: 630 })).toBe('clocks go back 30 min'); // Lord Howe
    expect([formatOffset(120), formatOffset(-300), formatOffset(630), formatOffset(0)]).toEqual([
      'UTC+02:00',
      'UTC-05:00',
      'UTC+10:30',
      'UTC',
    ]);
    expect(formatInZone('2026-03-29T01:00:00Z', 'Europe/Berlin')).toBe('Mar 29, 03:00');
  });

  it('says a cron in words with its zone, and falls back to the cron where cronstrue cannot read it', () => {
    expect(describeCron('0 9 * * 1-5', 'Europe/Paris')).toBe('At 09:00 AM, Monday through Friday (Europe/Paris)');
    expect(describeCron('*/5 * * * * *', 'UTC')).toBe('Every 5 seconds (UTC)');
    expect(describeCron('not a cron', 'UTC')).toBe('not a cron (UTC)');
  });
});
