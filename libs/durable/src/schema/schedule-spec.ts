import { Cron } from 'croner';
import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../errors';
import type { ScheduleOverlap, ScheduleSpec } from '../interfaces';
import { isStorableText } from './define-signal';
import { toMs } from './duration';
import { keysOf, refuseUnknownKeys } from './known-keys';
import { serializePayload, serializePayloadWith } from './serializer';

/**
 * Cron arithmetic for schedules, through croner (a maintained library without dependencies, whose
 * timezone handling follows the rules docs/guides/schedules.md states: a slot in a skipped local hour runs at the first
 * valid instant after it, a repeated hour's slot at its first occurrence). Nothing here keeps a timer.
 */

export const SCHEDULE_OVERLAPS: readonly ScheduleOverlap[] = ['skip', 'bufferOne', 'allow', 'cancelOther'];
export const SCHEDULE_CATCHUPS = ['latest', 'all'] as const;
/** The most slots one backfill call may start. */
export const MAX_BACKFILL_SLOTS = 10_000;
/** A schedule name: its run ids are `schedule:<name>:<slot>`, at most 200 characters, and a ':' would blur the prefix. */
const NAME = /^[^:\s]{1,120}$/;
const DEFAULT_CATCHUP_WINDOW = '1m';
/**
 * The shortest catch-up window: a pass may come seconds after its slot (a crowd of schedules due at once, a
 * sweep aimed a moment late), and a slot older than the window is recorded as missed, downtime or not.
 * Temporal's schedules keep the same floor.
 */
const MIN_CATCHUP_WINDOW_MS = 10_000;
/** The fields of a spec (create() takes its workflow beside them, apart). */
const SPEC_KEYS = keysOf<ScheduleSpec>({
  name: true,
  cron: true,
  timezone: true,
  overlap: true,
  catchupWindow: true,
  catchup: true,
  input: true,
  jitter: true,
  paused: true,
});

/** A schedule's spec with its defaults applied and checked: what the table stores. */
export interface ResolvedSchedule {
  name: string;
  workflow: string;
  cron: string;
  timezone: string;
  overlap: ScheduleOverlap;
  catchupWindowMs: number;
  catchup: 'latest' | 'all';
  /** The serializer's text of the spec's input. */
  input: string;
  jitterMs: number;
  paused: boolean;
}

/**
 * Checks a spec and applies its defaults; every mistake is an InvalidArgumentError naming the
 * schedule and what is wrong, so nothing is written for a spec that cannot fire.
 */
export function resolveScheduleSpec(spec: ScheduleSpec, workflow: string): ResolvedSchedule {
  if (!spec || typeof spec !== 'object')
    throw new InvalidArgumentError(`A schedule of workflow "${workflow}" is not a ScheduleSpec object.`);
  const { name } = spec;
  if (typeof name !== 'string' || !NAME.test(name) || !isStorableText(name) || name === '.' || name === '..') {
    throw new InvalidArgumentError(
      `Schedule name ${JSON.stringify(name)} (workflow "${workflow}") must be 1 to 120 characters without ':', spaces, NUL or lone surrogates, and not . or ..: it is part of its runs' ids and of its address on the REST API, where HTTP clients remove such segments.`,
    );
  }
  const bad = (what: string) => new InvalidArgumentError(`Schedule "${name}": ${what}`);
  refuseUnknownKeys(spec, SPEC_KEYS, `Schedule "${name}"`);
  // Left out, an option takes its default; null is not taken as leaving it out (an update's { timezone: null }
  // would move the schedule to UTC without a word).
  const nulled = SPEC_KEYS.find((key) => (spec as unknown as Record<string, unknown>)[key] === null);
  if (nulled !== undefined) throw bad(`${nulled} is null; leave it out for its default.`);
  const timezone = spec.timezone ?? 'UTC';
  if (typeof timezone !== 'string' || !isTimezone(timezone)) {
    throw bad(`timezone ${JSON.stringify(timezone)} is not an IANA time zone; use a name such as 'Europe/Paris' or 'America/New_York'.`);
  }
  const cron = spec.cron;
  if (typeof cron !== 'string') throw bad(`cron must be a string of 5 fields, or 6 with seconds first; got ${typeof cron}.`);
  let pattern: Cron;
  try {
    pattern = cronOf(cron, timezone);
  } catch (error) {
    throw bad(`cron ${JSON.stringify(cron)} is invalid (${(error as Error).message}); use 5 fields, or 6 with seconds first.`);
  }
  // A pattern croner parses may still match no date ('0 0 30 2 *'): stored, it would never fire.
  if (!pattern.nextRun()) throw bad(`cron ${JSON.stringify(cron)} matches no date from now on.`);
  const overlap = spec.overlap ?? 'skip';
  if (!SCHEDULE_OVERLAPS.includes(overlap))
    throw bad(`overlap must be one of ${SCHEDULE_OVERLAPS.join(', ')}; got ${JSON.stringify(overlap)}.`);
  const catchup = spec.catchup ?? 'latest';
  if (!SCHEDULE_CATCHUPS.includes(catchup))
    throw bad(`catchup must be one of ${SCHEDULE_CATCHUPS.join(', ')}; got ${JSON.stringify(catchup)}.`);
  const catchupWindowMs = toMs(spec.catchupWindow ?? DEFAULT_CATCHUP_WINDOW, `Schedule "${name}": catchupWindow`);
  if (catchupWindowMs < MIN_CATCHUP_WINDOW_MS)
    throw bad(
      `catchupWindow must be at least 10s; got ${catchupWindowMs} ms. A pass may come seconds after a slot, and a slot older than the window is recorded as missed.`,
    );
  const jitterMs = spec.jitter === undefined ? 0 : toMs(spec.jitter, `Schedule "${name}": jitter`);
  if (spec.paused !== undefined && typeof spec.paused !== 'boolean') throw bad(`paused must be true or false.`);
  const given = spec.input ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw bad(`input must be an object (its fields are spread into the run's input beside scheduledAt).`);
  }
  const input = serializePayload(given, `Schedule "${name}": input`);
  // Each slot's run takes the input with `scheduledAt` added: one that fits only without it would fail every pass.
  slotRunInput(name, input, new Date(0));
  return { name, workflow, cron, timezone, overlap, catchupWindowMs, catchup, input, jitterMs, paused: spec.paused ?? false };
}

function isTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Parsed crons by timezone and expression: a pass over thousands of schedules parses each distinct
 * expression once (a paused Cron only computes instants, so one serves every schedule that shares it).
 */
const parsedCrons = new Map<string, Cron>();
const MAX_PARSED_CRONS = 1_000;

/** A croner pattern that never starts a timer: only its arithmetic is used. */
export function cronOf(cron: string, timezone: string): Cron {
  const key = `${timezone} ${cron}`;
  let parsed = parsedCrons.get(key);
  if (!parsed) {
    // 'no-wildcard': a cron whose times are lists or ranges ('30 2,14 * * *') gets the DST rules of a single time,
    // as in Vixie cron; croner's default keeps them for a single value, so such a slot was dropped in a skipped hour
    // and run twice in a repeated one. Steps and wildcards ('*/15 * * * *') keep real time through both.
    parsed = new Cron(cron, {
      timezone,
      paused: true,
      mode: cron.trim().split(/\s+/).length === 6 ? '6-part' : '5-part',
      fixedTimeRule: 'no-wildcard',
    });
    if (parsedCrons.size >= MAX_PARSED_CRONS) parsedCrons.clear();
    parsedCrons.set(key, parsed);
  }
  return parsed;
}

/** The slots after `after` up to and including `upTo`, oldest first, at most `max` of them. */
export function slotsBetween(cron: Cron, after: Date, upTo: Date, max: number): Date[] {
  const slots: Date[] = [];
  let slot = cron.nextRun(after);
  while (slot && slot.getTime() <= upTo.getTime() && slots.length < max) {
    slots.push(slot);
    slot = cron.nextRun(slot);
  }
  return slots;
}

/**
 * The slot's delay under a jitter: a fraction of it stable for a (schedule, slot), spread evenly, so a jitter
 * cut short (a late pass: SchedulePass) keeps the slot's place in it. 48 bits of the hash: a jitter may be up to
 * 100 years, past what 32 bits reach in milliseconds.
 */
export function jitterOf(name: string, slot: Date, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  const hash = createHash('sha256').update(`${name}\u0000${slot.toISOString()}`).digest();
  return Math.floor((hash.readUIntBE(0, 6) / 2 ** 48) * (jitterMs + 1));
}

/** The input of a slot's run: the schedule's stored input (an object) with the slot as `scheduledAt`. */
export const slotRunInput = (name: string, input: string, slot: Date) =>
  serializePayloadWith(input, { scheduledAt: slot }, `Schedule "${name}": input`);

/** The id of a slot's run: two instances firing one slot collide on it. */
export const slotRunId = (name: string, slot: Date) => `schedule:${name}:${slot.toISOString()}`;
/** The prefix every run a schedule started has (slots, triggers, backfills). */
export const scheduleRunPrefix = (name: string) => `schedule:${name}:`;
