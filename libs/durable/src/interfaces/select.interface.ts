import type { ErrorInfo } from '../errors/error-info';
import type { Duration } from './duration.interface';
import type { ChildHandle } from './workflow.interface';

declare const armValue: unique symbol;

/** One condition of `ctx.select`, built by `ctx.signal`, `ctx.message` or `ctx.timer`; its value's type is T. */
export interface SelectArm<T> {
  readonly arm: 'signal' | 'message' | 'timer';
  /** Carries the value type only; never set. */
  readonly [armValue]?: T;
}

/** A child's end as the value of its select arm: its output, or its failure as a value (never thrown). */
export type ChildEnd<O> = { status: 'completed'; output: O } | { status: 'failed' | 'cancelled'; error: ErrorInfo };

/** The arms of a select by name: arms built on `ctx`, and child handles. `deadline` is the select's own. */
export type SelectArms = Record<string, SelectArm<unknown> | ChildHandle<unknown>>;

/** The value an arm resolves with. */
export type SelectArmValue<A> = A extends ChildHandle<infer O> ? ChildEnd<O> : A extends SelectArm<infer T> ? T : never;

/** What a select returns: the winning arm's name with its value, typed per arm, or its deadline. */
export type SelectResult<A extends SelectArms> =
  { [K in keyof A & string]: { key: K; value: SelectArmValue<A[K]> } }[keyof A & string] | { key: 'deadline' };

export interface SelectOptions {
  /** The select resolves to `{ key: 'deadline' }` when nothing came by then (journaled once, like a timer). */
  deadline?: Date | Duration;
}
