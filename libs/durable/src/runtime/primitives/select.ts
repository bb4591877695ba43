import { InvalidArgumentError } from '../../errors';
import type { ChannelRef, ChildEnd, Duration, SelectArm, SelectArms, SelectOptions, SelectResult, SignalRef } from '../../interfaces';
import type { SelectArmReason } from '../../wait-kinds/wait-kind.registry';
import { checkName } from '../../schema/define-signal';
import { toMs } from '../../schema/duration';
import { keysOf, refuseUnknownKeys } from '../../schema/known-keys';
import { deserialize, serialize } from '../../schema/serializer';
import { Execution, never } from '../execution';
import { ExecutionChildHandle } from './children';
import { declaredName } from './declared';
import { journaledInstant } from './sleep';

/** The arms `ctx.signal`, `ctx.message` and `ctx.timer` build: what each waits on, nothing else. */
export class SignalArm<T> implements SelectArm<T> {
  readonly arm = 'signal';
  constructor(readonly ref: SignalRef<T>) {}
}
export class MessageArm<T> implements SelectArm<T> {
  readonly arm = 'message';
  constructor(readonly ref: ChannelRef<unknown>) {}
}
export class TimerArm implements SelectArm<Date> {
  readonly arm = 'timer';
  constructor(readonly at: Duration | Date) {}
}

/** An arm checked against the workflow, with the name it waits on (a signal, a channel, a child run). */
type Armed =
  | { key: string; kind: 'signal'; name: string }
  | { key: string; kind: 'channel'; name: string }
  | { key: string; kind: 'child'; name: string }
  | { key: string; kind: 'timer'; until: number };

/** An arm that is ready: when it became so (the rule is earliest first), and its value. */
interface Ready {
  key: string;
  at: number;
  value: () => unknown;
}

/** `deadline` is the select's own result key, so no arm may take it. */
const DEADLINE = 'deadline';
const SELECT_OPTION_KEYS = keysOf<SelectOptions>({ deadline: true });

/**
 * The first of several things. The winner is checkpointed once under `select:<name>` and returned on
 * every later execution, whatever arrived since. Among the arms ready when the select looks, the
 * earliest delivered wins (signal delivery, message send, child end, timer instant; the deadline
 * counts as an arm listed last), ties to the first listed. Nothing is consumed for a losing arm. With
 * nothing ready the run waits in-process when its next instant is within inlineWaitMs, else parks with
 * one reason listing every arm; a delivery to any arm, a child's end or the next instant wakes it.
 */
export async function select<A extends SelectArms>(
  execution: Execution,
  name: string,
  arms: A,
  opts: SelectOptions = {},
): Promise<SelectResult<A>> {
  if (!execution.isActive) return never();
  await execution.enter('select');
  checkName(name, 'select');
  const key = execution.keyFor(name, 'select');
  // Its instants are on the path whichever way it ends (decided, or the run's deadline thrown here again).
  reachInstants(execution, key, arms, opts);
  execution.deadline.replayAt(key);
  const stored = execution.journal.steps.get(key);
  if (stored) return execution.replay(key, stored);
  const entries = checkedArms(execution, name, arms, opts);
  // Every name first, then the timers' instants: an undeclared signal is refused before a timer listed ahead of it is journaled.
  const named = entries.map(([arm, value]) => namedArm(execution, arm, value));
  const armed: Armed[] = [];
  for (const [i, [arm, value]] of entries.entries())
    armed.push(
      named[i] ?? {
        key: arm,
        kind: 'timer',
        until: await instant(execution, `${key}:timer:${arm}`, 'sleep', (value as TimerArm).at, name, arm),
      },
    );
  const deadline =
    opts.deadline === undefined ? undefined : await instant(execution, `${key}:deadline`, 'deadline', opts.deadline, name, DEADLINE);
  const { deps } = execution;
  const wakes = execution.wakeCursor();
  for (;;) {
    await readChildren(execution, armed);
    const now = deps.clock.now();
    const ready = armed.flatMap((arm) => readiness(execution, arm, now));
    if (deadline !== undefined && deadline <= now) ready.push({ key: DEADLINE, at: deadline, value: () => undefined });
    // Earliest first; sort is stable, so a tie keeps the order the arms were listed in.
    const earliest = ready.sort((a, b) => a.at - b.at)[0];
    // Of two deadlines, the earlier decides: the run's, passed before the select's (both while no instance
    // ran), is thrown by beforeWait below. Other arms ready at once return, as a buffered signal does to waitForSignal.
    const winner = earliest && !(earliest.key === DEADLINE && execution.deadline.precedes(earliest.at, now)) ? earliest : undefined;
    if (winner) {
      const result = winner.key === DEADLINE ? { key: DEADLINE } : { key: winner.key, value: winner.value() };
      const kept = await execution.decide(key, 'select', {
        outcome: 'ok',
        result: serialize(result, `The winner of select("${name}")`),
        error: null,
      });
      return execution.replay(key, kept);
    }
    const limit = await execution.deadline.beforeWait(key);
    const instants = [...armed.flatMap((arm) => (arm.kind === 'timer' ? [arm.until] : [])), ...(deadline === undefined ? [] : [deadline])];
    const next = instants.length ? Math.min(...instants) : undefined;
    // Parked, the run's deadline caps the wake (suspend); in-process, this wait ends by it.
    const inProcessUntil = limit === undefined ? next : Math.min(next ?? limit, limit);
    if (next === undefined || inProcessUntil! - now > deps.inlineWaitMs) {
      return execution.suspend({
        reason: {
          kind: 'select',
          name,
          arms: armed.map(reasonOf),
          ...(deadline === undefined ? {} : { deadline: new Date(deadline) }),
        },
        name: null,
        wakeAt: next === undefined ? null : new Date(next),
      });
    }
    await wakes.next(inProcessUntil! - now); // its mark is before both reads: the deliveries here, the children at the loop's top
    if (!execution.isActive) return never();
    await refreshDeliveries(execution, armed);
  }
}

/** The arms as given, checked: a clear error (and nothing written) for anything that is not one. */
function checkedArms(execution: Execution, name: string, arms: SelectArms, opts: SelectOptions): Array<[string, unknown]> {
  if (typeof arms !== 'object' || arms === null || Array.isArray(arms))
    throw new InvalidArgumentError(
      `select("${name}") needs its arms as an object of named arms; got ${Array.isArray(arms) ? 'an array' : String(arms)}.`,
    );
  const entries = Object.entries(arms);
  if (!entries.length) throw new InvalidArgumentError(`select("${name}") needs at least one arm; got none.`);
  if (opts === null || typeof opts !== 'object') throw new InvalidArgumentError(`select("${name}") options must be an object.`);
  refuseUnknownKeys(opts, SELECT_OPTION_KEYS, `select("${name}")`);
  if (opts.deadline !== undefined) checkInstant(opts.deadline, name, DEADLINE);
  for (const [arm, value] of entries) {
    if (arm === DEADLINE)
      throw new InvalidArgumentError(`select("${name}"): "deadline" is the select's own result; name the arm otherwise.`);
    checkName(arm, `select("${name}") arm`);
    const isArm = value instanceof SignalArm || value instanceof MessageArm || value instanceof TimerArm;
    if (!isArm && !(value instanceof ExecutionChildHandle))
      throw new InvalidArgumentError(
        `select("${name}") arm "${arm}" must be ctx.signal(…), ctx.message(…), ctx.timer(…) or a child handle of this run.`,
      );
    if (value instanceof TimerArm) checkInstant(value.at, name, arm);
    if (value instanceof ExecutionChildHandle && !value.belongsTo(execution))
      throw new InvalidArgumentError(
        `select("${name}") arm "${arm}": the child handle belongs to another execution; start the child in this run.`,
      );
  }
  return entries;
}

/** One arm by its name: a signal or channel by its declared name (UnknownSignalError), a child by its run id; null for a timer (its instant is journaled). */
function namedArm(execution: Execution, arm: string, value: unknown): Armed | null {
  if (value instanceof SignalArm) return { key: arm, kind: 'signal', name: declaredName(execution.workflow, 'signal', value.ref) };
  if (value instanceof MessageArm) return { key: arm, kind: 'channel', name: declaredName(execution.workflow, 'channel', value.ref) };
  if (value instanceof TimerArm) return null;
  return { key: arm, kind: 'child', name: (value as ExecutionChildHandle<unknown>).runId };
}

/** Throws unless `at` is a valid Date or duration: checked for every arm before anything is journaled. */
function checkInstant(at: Duration | Date, name: string, arm: string): void {
  if (at instanceof Date) {
    if (Number.isNaN(at.getTime())) throw new InvalidArgumentError(`select("${name}") ${arm} needs a valid Date or a duration.`);
  } else toMs(at, `select("${name}") ${arm}`);
}

/**
 * A select that replays its decision, or throws the run's deadline again, passes its timer and deadline
 * checkpoints without reading them: looked up here, so a re-execution does not count them as stranded
 * (UNREACHED_CHECKPOINTS, `ctx.patched`). The exact keys
 * a first pass looks up, not a prefix: a select named `x:timer:…` is another select's, not this one's.
 */
function reachInstants(execution: Execution, key: string, arms: SelectArms, opts: SelectOptions | null): void {
  const { steps } = execution.journal;
  if (opts?.deadline !== undefined) steps.has(`${key}:deadline`);
  if (typeof arms !== 'object' || arms === null) return;
  for (const [arm, value] of Object.entries(arms)) if (value instanceof TimerArm) steps.has(`${key}:timer:${arm}`);
}

/** A timer's or the deadline's instant, journaled once (a Date as given, a duration from the database's now). */
async function instant(execution: Execution, key: string, kind: string, at: Duration | Date, name: string, arm: string): Promise<number> {
  if (at instanceof Date) return journaledInstant(execution, key, kind, undefined, at);
  return journaledInstant(execution, key, kind, toMs(at, `select("${name}") ${arm}`));
}

/** The arm's readiness now, from the journal: when it became ready and its value; nothing when it is not. */
function readiness(execution: Execution, arm: Armed, now: number): Ready[] {
  const { journal } = execution;
  switch (arm.kind) {
    case 'signal':
      if (!journal.signals.has(arm.name)) return [];
      return [{ key: arm.key, at: journal.signalTimes.get(arm.name) ?? now, value: () => deserialize(journal.signals.get(arm.name)) }];
    case 'channel': {
      const next = journal.messages.get(arm.name)?.[0];
      if (!next) return [];
      const sentAt = new Date(next.sentAt);
      return [
        {
          key: arm.key,
          at: sentAt.getTime(),
          value: () => ({ key: next.key, seq: Number(next.seq), payload: deserialize(next.payload), sentAt }),
        },
      ];
    }
    case 'child': {
      const child = journal.children.get(arm.name);
      if (!child) return [];
      const end: () => ChildEnd<unknown> = () =>
        child.status === 'completed'
          ? { status: 'completed', output: deserialize(child.output) }
          : { status: child.status as 'failed' | 'cancelled', error: child.error ?? { name: 'Error', message: `child ${child.status}` } };
      return [{ key: arm.key, at: child.endedAt ? new Date(child.endedAt).getTime() : now, value: end }];
    }
    case 'timer':
      return arm.until <= now ? [{ key: arm.key, at: arm.until, value: () => new Date(arm.until) }] : [];
  }
}

/** Reads whether the child arms not yet known to have ended have: one round trip, none without child arms. */
async function readChildren(execution: Execution, armed: Armed[]): Promise<void> {
  const open = armed
    .filter((arm) => arm.kind === 'child' && !execution.journal.children.has(arm.name))
    .map((arm) => (arm as { name: string }).name);
  if (!open.length) return;
  for (const child of await execution.deps.journal.readChildren(open)) execution.journal.children.set(child.id, child);
}

/** After an in-process wait: the signals and messages of the arms, read again (a delivery may have come). */
async function refreshDeliveries(execution: Execution, armed: Armed[]): Promise<void> {
  if (!armed.some((arm) => arm.kind === 'signal' || arm.kind === 'channel')) return;
  execution.journal.takeDeliveries(await execution.deps.journal.load(execution.runId));
}

function reasonOf(arm: Armed): SelectArmReason {
  return arm.kind === 'timer'
    ? { arm: arm.key, kind: 'timer', until: new Date(arm.until) }
    : { arm: arm.key, kind: arm.kind, name: arm.name };
}
