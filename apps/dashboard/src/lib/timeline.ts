import type { HistoryEntry, JournalStep, RunDetail, RunStatus } from '../api/types';
import { WAIT_KIND_DECLARATIONS, type WaitKind } from '../api/types';
import { isClosed } from './run-status';
import { describeStep } from './step-names';

// A run over time, from its detail alone (GET /runs/:id): its steps as bars, the time it spent parked
// as gaps with what it waited for, and the signals and messages it received as marks. Pure, so the
// page only draws it.

/** A journal row on the time axis: a step from its start to its end; a checkpoint (no start) at its instant. */
export interface TimelineBar {
  key: string;
  kind: JournalStep['kind'];
  meaning: string;
  start: number;
  end: number;
  /** Recorded at one instant (a sleep's wake time, a child's start): no duration of its own. */
  instant: boolean;
  failed: boolean;
  error?: string;
}

/** A stretch the run waited, labelled with what it waited for. */
export interface TimelineGap {
  start: number;
  end: number;
  /** The wait's kind (a sleep, a signal…), or `pending` before a first claim. */
  kind: WaitKind | 'pending';
  label: string;
  /** Still waiting: the gap runs to now. */
  open: boolean;
}

/** A delivery to the run: a signal or a channel message. */
export interface TimelineMark {
  at: number;
  type: 'signal' | 'message';
  label: string;
}

export interface TimelineLane {
  runId: string;
  workflow: string;
  status: RunStatus;
  start: number;
  end: number;
  bars: TimelineBar[];
  gaps: TimelineGap[];
  marks: TimelineMark[];
}

/** Events that park a run, and those that end a park (a claim, or the run's end). */
const PARKS = new Set(['parked', 'retry-scheduled']);
const ENDS_WAIT = new Set(['claimed', 'lease-taken-over', 'completed', 'failed', 'cancelled']);

/** The lane of one run: `now` ends what is still open (a waiting run's gap, a running run's span). */
export function buildLane(detail: RunDetail, now: number): TimelineLane {
  const { run } = detail;
  const bars = detail.steps.map(toBar);
  const marks: TimelineMark[] = [
    ...detail.signals.map((s) => ({ at: Date.parse(s.deliveredAt), type: 'signal' as const, label: `signal ${s.name}` })),
    ...detail.messages.map((m) => ({
      at: Date.parse(m.sentAt),
      type: 'message' as const,
      label: `message ${m.key} on channel ${m.channel}`,
    })),
  ].sort((a, b) => a.at - b.at);
  const created = Date.parse(run.createdAt);
  const finished = run.finishedAt ? Date.parse(run.finishedAt) : isClosed(run.status) ? Date.parse(run.updatedAt) : now;
  const instants = [created, finished, ...bars.flatMap((b) => [b.start, b.end]), ...marks.map((m) => m.at)];
  const start = Math.min(...instants);
  const end = Math.max(...instants);
  // The moment between a start and its first claim is not worth a gap unless it lasted (a busy queue, no worker).
  const parked = gapsFromHistory(detail.history, run.queue, end).filter(
    (gap) => gap.kind !== 'pending' || gap.end - gap.start > (end - start) / 100,
  );
  return {
    runId: run.runId,
    workflow: run.workflow,
    status: run.status,
    start,
    end,
    bars,
    gaps: [...parked, ...inProcessSleeps(detail.steps, parked, end)].sort((a, b) => a.start - b.start),
    marks,
  };
}

function toBar(step: JournalStep): TimelineBar {
  const end = Date.parse(step.finishedAt);
  return {
    key: step.key,
    kind: step.kind,
    meaning: describeStep(step.key, step.kind).meaning,
    start: step.startedAt ? Date.parse(step.startedAt) : end,
    end,
    instant: !step.startedAt,
    failed: step.outcome === 'error',
    ...(step.error && { error: `${step.error.name}: ${step.error.message}` }),
  };
}

/**
 * Each park, from the history: from `parked` (or a retry's backoff, or a start that waits) to the claim
 * that ended it, or to the run's end; a park still open runs to `end`. The history the detail sends is
 * its last 500 rows, so a long run's earliest waits may be missing.
 */
function gapsFromHistory(history: HistoryEntry[], queue: string | undefined, end: number): TimelineGap[] {
  const gaps: TimelineGap[] = [];
  let open: Omit<TimelineGap, 'end' | 'open'> | null = null;
  for (const entry of history) {
    const at = Date.parse(entry.at);
    if (open && ENDS_WAIT.has(entry.event)) {
      gaps.push({ ...open, end: at, open: false });
      open = null;
    }
    if (PARKS.has(entry.event)) {
      if (open) gaps.push({ ...open, end: at, open: false });
      const reason = (entry.detail ?? {}) as Record<string, unknown>;
      const kind = (entry.event === 'retry-scheduled' ? 'retry' : reason.kind) as WaitKind;
      open = { start: at, kind, label: waitLabel(kind, reason) };
    } else if (entry.event === 'started') {
      const detail = (entry.detail ?? {}) as Record<string, unknown>;
      open = detail.startAt
        ? { start: at, kind: 'start', label: waitLabel('start', detail) }
        : { start: at, kind: queue ? 'queue' : 'pending', label: queue ? `queue ${queue}` : 'a worker to claim it' };
    }
  }
  if (open) gaps.push({ ...open, end: Math.max(end, open.start), open: true });
  return gaps;
}

/** "signal approval", "sleep nap", "child run order-1/ship": the registry's label and the reason's subject. */
function waitLabel(kind: WaitKind, reason: Record<string, unknown>): string {
  const declared = WAIT_KIND_DECLARATIONS[kind];
  if (!declared) return kind ?? 'waiting';
  const subject = declared.subject ? reason[declared.subject] : undefined;
  return typeof subject === 'string' ? `${declared.label} ${subject}` : declared.label;
}

/**
 * Sleeps short enough to be waited in-process leave no park in the history: their step's result is
 * the wake instant, so the gap runs from the step to it (or to the next step, if one came first).
 */
function inProcessSleeps(steps: JournalStep[], parked: TimelineGap[], end: number): TimelineGap[] {
  const gaps: TimelineGap[] = [];
  steps.forEach((step, index) => {
    if (step.kind !== 'sleep' || typeof step.result !== 'string') return;
    const from = Date.parse(step.finishedAt);
    const until = Date.parse(step.result);
    if (Number.isNaN(until) || until <= from) return;
    const next = steps.slice(index + 1).find((later) => Date.parse(later.startedAt ?? later.finishedAt) >= from);
    const to = Math.min(until, next ? Date.parse(next.startedAt ?? next.finishedAt) : end, end);
    if (to <= from || parked.some((gap) => gap.start < to && gap.end > from)) return;
    gaps.push({ start: from, end: to, kind: 'sleep', label: describeStep(step.key, step.kind).meaning, open: false });
  });
  return gaps;
}

/**
 * Rows for bars that would overlap on screen: each bar goes to the first row free at its start, a bar
 * taking at least `minMs` (an instant is drawn a few pixels wide). At most `maxRows`; past that, bars
 * share the row that frees first.
 */
export function packRows(bars: TimelineBar[], minMs: number, maxRows = 6): number[] {
  const rowEnds: number[] = [];
  const order = bars.map((bar, index) => ({ bar, index })).sort((a, b) => a.bar.start - b.bar.start);
  const rows = new Array<number>(bars.length);
  for (const { bar, index } of order) {
    const end = Math.max(bar.end, bar.start + minMs);
    let row = rowEnds.findIndex((rowEnd) => rowEnd <= bar.start);
    if (row < 0 && rowEnds.length < maxRows) row = rowEnds.length;
    if (row < 0) row = rowEnds.indexOf(Math.min(...rowEnds));
    rowEnds[row] = end;
    rows[index] = row;
  }
  return rows;
}

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const STEPS = [
  1,
  2,
  5,
  10,
  20,
  50,
  100,
  200,
  500,
  SECOND,
  2 * SECOND,
  5 * SECOND,
  10 * SECOND,
  15 * SECOND,
  30 * SECOND,
  MINUTE,
  2 * MINUTE,
  5 * MINUTE,
  10 * MINUTE,
  15 * MINUTE,
  30 * MINUTE,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  24 * HOUR,
  48 * HOUR,
  168 * HOUR,
];

/** Room a tick's label takes, by the unit it is written to ("14:05", "14:05:12", "14:05:12.345"), with a gap. */
const LABEL_PX = { minute: 56, second: 76, millisecond: 104 } as const;

/**
 * Round instants within [start, end] for an axis `widthPx` wide, as many as their labels leave room
 * for, on the operator's clock (an hourly tick falls on the local hour, also in a zone half an hour
 * off UTC), and the unit their labels need.
 */
export function axisTicks(start: number, end: number, widthPx: number): { ticks: number[]; unit: keyof typeof LABEL_PX } {
  const span = Math.max(end - start, 1);
  const unitOf = (step: number) => (step < SECOND ? 'millisecond' : step < MINUTE ? 'second' : 'minute');
  const step = STEPS.find((s) => (span / s + 1) * LABEL_PX[unitOf(s)] <= widthPx) ?? STEPS[STEPS.length - 1];
  const offset = -new Date(start).getTimezoneOffset() * MINUTE;
  const ticks: number[] = [];
  for (let at = Math.ceil((start + offset) / step) * step - offset; at <= end; at += step) ticks.push(at);
  return { ticks, unit: unitOf(step) };
}
