import type { ErrorInfo } from '../errors/error-info';

/*
 * Every kind of wait a run can be parked on, declared once. The primitive that parks a run names
 * its kind; everything else reads the declaration: the wake statements (which deliveries wake
 * which kinds), resume, the test clock, the REST filter, the dashboard (which imports this file),
 * the CHECK constraint on runs.wait_kind, and the WaitReason type. This file imports nothing but
 * types, so the dashboard's bundle can import it. How to add a kind: docs/architecture.md.
 */

/** What makes a run parked on a kind due. */
export type WakeSource =
  /** The delivery of the signal the run's `wait_name` names. */
  | 'signal'
  /** A message on the channel the run's `wait_name` names. */
  | 'channel'
  /** The end (completed, failed or cancelled) of one of the run's children. */
  | 'child-end'
  /** The run's `wake_at`: an instant the reason holds among its `times`. */
  | 'time'
  /** A free slot in the run's queue: the claim admits it (a `pending` run; the reason is read, not stored). */
  | 'slot';

/** The deliveries that wake runs: a signal or a channel message. */
export type Delivery = Extract<WakeSource, 'signal' | 'channel'>;

/**
 * One arm of a parked select, as its wait reason lists it: `name` is the signal's, the channel's or
 * the child run's id (deliveries match on kind and name); `until` a timer's instant.
 */
export interface SelectArmReason {
  arm: string;
  kind: 'signal' | 'channel' | 'child' | 'timer';
  name?: string;
  until?: Date;
}

/** The reason's own fields of kind R, known to the type system only. */
declare const reasonShape: unique symbol;

/** One kind's declaration; R is the shape of its wait reason (without `kind` and `since`). */
export interface WaitKindDeclaration<R extends object = object> {
  /** How the dashboard names the kind. */
  readonly label: string;
  /** What makes a run parked on this kind due; `resume` and the sweeper aside. */
  readonly wakes: readonly WakeSource[];
  /**
   * What `resume` does: `finish` ends the wait now (its journaled instant, if any, becomes now);
   * `reinvoke` executes the run again now, and it parks again if nothing came. A kind that finishes
   * and journals its instant parks with that step's key as its wait name (a sleep does).
   */
  readonly resume: 'finish' | 'reinvoke';
  /** Whether `DurableTestClock.advance` brings this kind's instants and wake time nearer. */
  readonly clock: boolean;
  /** The reason's field naming what the run waits on, shown after the label. */
  readonly subject?: keyof R & string;
  /** A field saying more about the wait, shown after the subject in parentheses. */
  readonly detail?: keyof R & string;
  /**
   * The reason's instants, with how the dashboard words each: `until` (the wake), `deadline` (a limit)
   * or `starts` (the instant the run starts, counted down live).
   */
  readonly times: { readonly [F in keyof R & string]?: 'until' | 'deadline' | 'starts' };
  readonly [reasonShape]?: R;
}

const declare = <R extends object>(declaration: WaitKindDeclaration<R>): WaitKindDeclaration<R> => declaration;

/** The registry: one entry per wait kind, in the order the dashboard lists them. */
export const WAIT_KINDS = {
  /** `waitForSignal`: the signal's delivery, or the deadline of `waitForSignal(…, { timeout })`. */
  signal: declare<{ name: string; deadline?: Date }>({
    label: 'signal',
    wakes: ['signal', 'time'],
    resume: 'reinvoke',
    clock: true,
    subject: 'name',
    times: { deadline: 'deadline' },
  }),
  /** `sleep`, `sleepUntil`: the journaled instant. */
  sleep: declare<{ name: string; until: Date }>({
    label: 'sleep',
    wakes: ['time'],
    resume: 'finish',
    clock: true,
    subject: 'name',
    times: { until: 'until' },
  }),
  /** `receive`, `consume` on an empty channel: a message on it. */
  channel: declare<{ channel: string }>({
    label: 'channel',
    wakes: ['channel'],
    resume: 'reinvoke',
    clock: false,
    subject: 'channel',
    times: {},
  }),
  /** A child handle's `result()`: the child's end. */
  child: declare<{ childRunId: string; step: string }>({
    label: 'child run',
    wakes: ['child-end'],
    resume: 'reinvoke',
    clock: false,
    subject: 'childRunId',
    times: {},
  }),
  /**
   * `select`: the first of its arms. A delivery wakes it through an arm of its kind and name (the
   * reason's `arms`), any child's end wakes it (it reads its child arms again), and `wake_at` is its
   * earliest timer or deadline.
   */
  select: declare<{ name: string; arms: SelectArmReason[]; deadline?: Date }>({
    label: 'select',
    wakes: ['signal', 'channel', 'child-end', 'time'],
    resume: 'reinvoke',
    clock: true,
    subject: 'name',
    times: { deadline: 'deadline' },
  }),
  /** A failed attempt with attempts left: the backoff's end. */
  retry: declare<{ until: Date; error: ErrorInfo }>({
    label: 'retry backoff',
    wakes: ['time'],
    resume: 'finish',
    clock: true,
    times: { until: 'until' },
  }),
  /** `start(…, { startAt })` or `{ delay }`: the run exists, and executes for the first time at the instant. */
  start: declare<{ until: Date }>({
    label: 'delayed start',
    wakes: ['time'],
    resume: 'finish',
    clock: true,
    times: { until: 'starts' },
  }),
  /**
   * A `pending` run of a queue that the claim has not admitted yet: the reason is worked out when the
   * run is read (from the queue's running runs, partitions and rate window), never stored on the row.
   * `undeclared`: the instance that read it declares no queue of that name (removed or renamed by a
   * deploy): it executes only on an instance that does. `position`, on a single run's read (`getRun`, the
   * run's page), is its place in line (1: next) in admission's order, `positionIn` its partition (when its queue
   * limits partitions) or its queue; counting up to 10,000 runs ahead (a deeper place reads 10,001).
   */
  queue: declare<{
    queue: string;
    cause: 'concurrency' | 'partition' | 'rate' | 'undeclared';
    partitionKey?: string;
    position?: number;
    positionIn?: 'queue' | 'partition';
  }>({
    label: 'queue',
    wakes: ['slot'],
    resume: 'reinvoke',
    clock: false,
    subject: 'queue',
    detail: 'cause',
    times: {},
  }),
} as const;

/** A registered wait kind's name. */
export type WaitKind = keyof typeof WAIT_KINDS;

type ReasonOf<K extends WaitKind> = (typeof WAIT_KINDS)[K] extends WaitKindDeclaration<infer R> ? R : never;
type Flat<T> = { [F in keyof T]: T[F] };

/**
 * Why a waiting run waits: its kind, the fields its declaration in `WAIT_KINDS` gives it
 * (wait-kinds/wait-kind.registry.ts), and since when it waits for that.
 */
export type WaitReason = { [K in WaitKind]: Flat<{ kind: K } & ReasonOf<K> & { since: Date }> }[WaitKind];

/** A reason as a primitive parks with it: `since` is the park statement's to set. */
export type ParkingReason = WaitReason extends infer W ? (W extends WaitReason ? Flat<Omit<W, 'since'>> : never) : never;

/** The registered kinds' names, in the registry's order. */
export const WAIT_KIND_NAMES = Object.keys(WAIT_KINDS) as WaitKind[];

export function isWaitKind(value: unknown): value is WaitKind {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(WAIT_KINDS, value);
}

/** The kinds a wake source ends. */
export function waitKindsWokenBy(source: WakeSource): WaitKind[] {
  return WAIT_KIND_NAMES.filter((kind) => WAIT_KINDS[kind].wakes.includes(source));
}

/** The kinds whose declaration says `pick`. */
export function waitKindsWhere(pick: (declaration: (typeof WAIT_KINDS)[WaitKind]) => boolean): WaitKind[] {
  return WAIT_KIND_NAMES.filter((kind) => pick(WAIT_KINDS[kind]));
}

/** Every instant field any kind's reason holds (`since` aside), for decoding and for the test clock. */
export const WAIT_TIME_FIELDS = [...new Set(WAIT_KIND_NAMES.flatMap((kind) => Object.keys(WAIT_KINDS[kind].times)))];
