import type { DueSchedule } from 'nestjs-durable/persistence/schedule.repository';
import { serializePayload } from 'nestjs-durable/schema/serializer';
import { SlotCalendar } from 'nestjs-durable/schema/slot-calendar';
import { BUFFERED_LOOK_MS, decide } from 'nestjs-durable/worker/schedule-pass';

/** A per-minute schedule whose last slot was 10:00, as the pass reads it. */
const due = (over: Partial<DueSchedule> = {}): DueSchedule => ({
  name: 'minutely',
  workflow: 'report',
  cron: '* * * * *',
  timezone: 'UTC',
  overlap: 'skip',
  catchup_window_ms: '3600000',
  catchup: 'latest',
  input: serializePayload({}, 'input'),
  jitter_ms: '0',
  paused: false,
  workflow_missing: false,
  last_slot: new Date('2026-06-01T10:00:00Z'),
  buffered_slot: null,
  last_run_id: null,
  last_run_status: null,
  ...over,
});
const at = (hhmm: string) => new Date(`2026-06-01T${hhmm}:00.000Z`);

describe("the pass's decision for one due schedule", () => {
  it("catch-up 'latest' over a backlog longer than a pass starts only the newest slot, in the pass that reaches it, and records every other one missed", () => {
    const now = new Date('2026-06-01T10:10:30Z');
    let row = due();
    const started: string[] = [];
    const missed: string[] = [];
    // Three slots a pass (the pass's cap is 1,000: the rule is the same): 10:01 to 10:10 take four passes.
    for (let pass = 0; pass < 4; pass++) {
      const firing = decide(row, new SlotCalendar(now, 3));
      started.push(...firing.runs.map((r) => r.id));
      missed.push(...firing.skips.filter((s) => s.reason === 'missed').map((s) => s.slot.toISOString()));
      row = { ...row, last_slot: firing.lastSlot, last_run_id: firing.lastRunId };
    }
    expect(started).toEqual([`schedule:minutely:${at('10:10').toISOString()}`]);
    expect(missed).toEqual(['01', '02', '03', '04', '05', '06', '07', '08', '09'].map((m) => at(`10:${m}`).toISOString()));
  });

  it("catch-up 'latest' over a backlog of exactly a whole number of passes still starts its newest slot, in the last of them", () => {
    const now = new Date('2026-06-01T10:09:30Z');
    let row = due();
    const started: string[] = [];
    // Nine slots, three a pass: the third pass holds the newest, and no slot is left for a fourth.
    for (let pass = 0; pass < 4; pass++) {
      const firing = decide(row, new SlotCalendar(now, 3));
      started.push(...firing.runs.map((r) => r.id));
      row = { ...row, last_slot: firing.lastSlot, last_run_id: firing.lastRunId };
    }
    expect(started).toEqual([`schedule:minutely:${at('10:09').toISOString()}`]);
  });

  it('a pause records the buffered slot it drops as paused, beside the slots that came while paused', () => {
    const firing = decide(
      due({ paused: true, overlap: 'bufferOne', buffered_slot: at('09:59'), last_run_status: 'waiting' }),
      new SlotCalendar(new Date('2026-06-01T10:02:30Z'), 1_000),
    );
    expect(firing.runs).toEqual([]);
    expect(firing.bufferedSlot).toBeNull();
    expect(firing.skips).toEqual([
      { slot: at('09:59'), reason: 'paused' },
      { slot: at('10:01'), reason: 'paused' },
      { slot: at('10:02'), reason: 'paused' },
    ]);
  });

  it("a schedule whose workflow no instance executes is held as through downtime: no slot started or skipped, due again only when the flag clears; an operator's pause still records its slots", () => {
    const calendar = new SlotCalendar(new Date('2026-06-01T10:02:30Z'), 1_000);
    const missing = due({ workflow_missing: true, overlap: 'bufferOne', buffered_slot: at('09:59'), last_run_status: 'completed' });
    expect(decide(missing, calendar)).toEqual({
      runs: [],
      skips: [],
      lastSlot: at('10:00'),
      nextFireAt: null,
      bufferedSlot: at('09:59'),
      lastRunId: null,
    });
    const paused = decide({ ...missing, paused: true }, calendar);
    expect(paused.skips.map((skip) => skip.reason)).toEqual(['paused', 'paused', 'paused']);
    expect(paused.lastSlot).toEqual(at('10:02'));
  });

  it('while a slot is buffered the schedule looks again a second on, not at once; its next slot when that comes first', () => {
    const now = new Date('2026-06-01T10:00:30Z');
    const hourly = decide(
      due({ cron: '0 * * * *', overlap: 'bufferOne', last_slot: at('09:00'), last_run_status: 'running' }),
      new SlotCalendar(now, 1_000),
    );
    expect(hourly.bufferedSlot).toEqual(at('10:00'));
    expect(hourly.nextFireAt).toEqual(new Date(now.getTime() + BUFFERED_LOOK_MS));
    const everySecond = decide(
      due({ cron: '*/1 * * * * *', overlap: 'bufferOne', last_slot: new Date('2026-06-01T10:00:29.000Z'), last_run_status: 'running' }),
      new SlotCalendar(new Date('2026-06-01T10:00:30.200Z'), 1_000),
    );
    expect(everySecond.nextFireAt).toEqual(new Date('2026-06-01T10:00:31.000Z'));
  });
});
