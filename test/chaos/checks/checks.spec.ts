import { serialize } from 'nestjs-durable/schema/serializer';
import { CHAOS_ORDER_QUEUE } from '../chaos.workflows';
import { check } from '../checker';
import type { DeliveryRecord } from '../driver';
import type { FaultRecord } from '../faults';
import type { PlannedDelivery, PlannedRun } from '../plan';
import { parseOptions } from '../profiles';
import { checkChannels } from './channels';
import type { CheckResult } from './check';
import type { Evidence, HistoryRow, LedgerRow, RunRow, StepRow } from './data';
import { checkEffects, CRASH_MS } from './effects';
import { checkFencing } from './fencing';
import { checkMinimums } from './minimums';
import { checkOperator } from './operator';
import { checkQueues } from './queues';
import { checkRecovery } from './recovery';
import { checkRetention } from './retention';
import { checkSignals } from './signals';
import { checkStuck } from './stuck';
import { checkTerminal } from './terminal';
import { checkTimers } from './timers';
import { checkTransactions } from './transactions';

/** Every check on records made by hand, each made to violate it: each catches what it promises to, and passes what is fine. */
const { profile } = parseOptions(['--profile', 'ci', '--seed', '1']);
const T = 1_000_000;

function evidence(parts: Partial<Evidence>): Evidence {
  return {
    profile,
    phases: profile.cycle.length,
    planned: [],
    processes: [],
    runs: new Map(),
    steps: new Map(),
    signals: new Map(),
    messages: new Map(),
    history: new Map(),
    ledger: new Map(),
    business: new Set(),
    starts: [],
    deliveries: [],
    rollbacks: [],
    operations: [],
    faults: [],
    samples: [],
    stuck: [],
    quietChecks: 0,
    ...parts,
  };
}

function run(id: string, status: string, extra: Partial<RunRow> = {}): [string, RunRow] {
  const finished = ['completed', 'failed', 'cancelled'].includes(status);
  return [
    id,
    {
      id,
      status,
      parent_id: null,
      wait: null,
      wake_at: null,
      attempt: 1,
      output: null,
      created_at: new Date(T),
      finished_at: finished ? new Date(T + 5_000) : null,
      deleted_at: null,
      parent_status: null,
      ...extra,
    },
  ];
}

let nextId = 1;
/** History rows: event, commit time, detail, actor (a worker's is its id, `host:pid:random`). */
function history(
  runId: string,
  ...events: Array<[string, number, (Record<string, unknown> | undefined)?, string?]>
): [string, HistoryRow[]] {
  return [
    runId,
    events.map(([event, at, detail, actor]) => ({
      id: nextId++,
      run_id: runId,
      at: new Date(at),
      event,
      actor: actor ?? 'test',
      detail: detail ?? null,
      committedAt: at,
    })),
  ];
}

function step(key: string, committedAt: number): [string, StepRow] {
  return [key, { key, kind: 'step', outcome: 'ok', result: serialize({ pid: 1, ledgerId: 1 }, key), committedAt }];
}

const start = (runId: string, extra: Partial<Evidence['starts'][number]> = {}): Evidence['starts'][number] => ({
  runId,
  signalMode: 'none',
  messages: [],
  startVia: 'client',
  role: 'plain',
  ok: true,
  attempts: 1,
  ...extra,
});

const messages = (result: { violations: Array<{ message: string }> }) => result.violations.map((v) => v.message);

describe('chaos checks: retention', () => {
  it('flags a child deleted while its parent was unfinished, a run deleted unfinished, and one deleted before its age', () => {
    const deleted = new Date(T + 9_000);
    const e = evidence({
      runs: new Map([
        run('a', 'completed', { deleted_at: deleted }),
        run('a/child', 'completed', { parent_id: 'a', deleted_at: deleted, parent_status: 'waiting' }),
        run('b', 'waiting', { deleted_at: deleted }),
        run('c', 'completed', { deleted_at: new Date(T + 5_100) }),
        run('d', 'cancelled', { deleted_at: deleted }),
        run('d/child', 'cancelled', { parent_id: 'd', deleted_at: deleted, parent_status: null }),
      ]),
    });
    const found = messages(checkRetention(e));
    expect(found).toEqual([
      "deleted while its parent a was waiting (the parent's result() then finds no child)",
      'deleted while waiting (not finished)',
      `deleted 100 ms after it completed, before its age of ${profile.engine.retention.completedMs} ms`,
    ]);
    expect(checkRetention(e).metrics).toMatchObject({ deleted: 6, children: 2 });
  });
});

describe('chaos checks: operator actions', () => {
  it('a cancelled run that completes later, commits a checkpoint after the cancel, or leaves a child unfinished is caught', () => {
    const e = evidence({
      runs: new Map([run('a', 'completed'), run('a/child', 'running', { parent_id: 'a' })]),
      history: new Map([
        history('a', ['started', T], ['cancelled', T + 100], ['completed', T + 200]),
        history('a/child', ['started', T + 50]),
      ]),
      steps: new Map([['a', new Map([step('reserve', T + 10), step('charge', T + 150)])]]),
    });
    expect(messages(checkOperator(e))).toEqual([
      'cancelled (history 2), then completed at the end',
      'completed 100.0 ms after it was cancelled',
      'checkpoint charge committed 50.0 ms after the run was cancelled',
      'child a/child is still running after its parent was cancelled',
    ]);
  });

  it('a child spawned after its parent was cancelled, or finished after it, is caught; one finished before it is fine', () => {
    const cancelled = (id: string, childEnd: string, childAt: number, spawnAt = T + 10) =>
      evidence({
        runs: new Map([run(id, 'cancelled'), run(`${id}/child`, childEnd, { parent_id: id })]),
        history: new Map([
          history(id, ['cancelled', T + 100]),
          history(`${id}/child`, ['started', spawnAt], [childEnd, childAt, childEnd === 'cancelled' ? { cascadedFrom: id } : undefined]),
        ]),
      });
    expect(messages(checkOperator(cancelled('a', 'completed', T + 50)))).toEqual([]);
    expect(checkOperator(cancelled('b', 'cancelled', T + 100)).metrics.cascaded).toBe(1);
    expect(messages(checkOperator(cancelled('c', 'completed', T + 300)))).toEqual([
      'child c/child completed 200.0 ms after its parent was cancelled',
    ]);
    expect(messages(checkOperator(cancelled('d', 'cancelled', T + 400, T + 300)))).toEqual([
      'child d/child was spawned 200.0 ms after its parent was cancelled',
    ]);
  });

  it('a retried run must have failed first and must end; a resume needs an operator', () => {
    const e = evidence({
      runs: new Map([run('a', 'completed'), run('b', 'failed'), run('c', 'completed')]),
      history: new Map([
        history('a', ['failed', T], ['retried', T + 10], ['completed', T + 20]),
        history('b', ['failed', T], ['retried', T + 10], ['failed', T + 20]),
        history('c', ['retried', T + 10], ['resumed', T + 20], ['completed', T + 30]),
      ]),
    });
    expect(messages(checkOperator(e))).toEqual([
      'retried, then left failed',
      'retried without having failed first',
      'resumed 1 time(s), but no operator resumed it',
    ]);
  });

  it('a run whose cancel was answered must end cancelled; one whose cancel got no clear answer may have ended either way', () => {
    const cancel = (runId: string, outcome: 'accepted' | 'refused') => ({
      runId,
      op: 'cancel' as const,
      via: 'rest' as const,
      sentAt: T,
      doneAt: T,
      outcome,
      attempts: 1,
    });
    const e = evidence({
      starts: [start('a'), start('b'), start('c')],
      runs: new Map([
        run('a', 'completed'),
        run('a/child', 'completed'),
        run('b', 'cancelled'),
        run('c', 'completed'),
        run('c/child', 'completed'),
      ]),
      operations: [cancel('a', 'accepted'), cancel('b', 'refused'), cancel('c', 'refused')],
    });
    expect(checkTerminal(e).violations.map((v) => `${v.runId}: ${v.message}`)).toEqual([
      'a: not cancelled: completed, waiting null, wake_at none, attempt 1',
    ]);
  });
});

describe('chaos checks: application transactions', () => {
  const payload = (by: string, copy: number) => serialize({ by, copy }, 'approval');

  it('a committed business row has its run and its signal, a run started in a transaction has its business row, a rollback leaves nothing', () => {
    const e = evidence({
      starts: [start('a', { startVia: 'tx' }), start('b', { startVia: 'tx' }), start('c', { startVia: 'tx', ok: false })],
      rollbacks: [
        { runId: 'x', rolledBack: true, attempts: 1 },
        { runId: 'y', rolledBack: true, attempts: 1 },
      ],
      runs: new Map([run('a', 'completed'), run('b', 'completed'), run('y', 'pending')]),
      business: new Set(['start:a', 'start:c', 'start:x', 'signal:a:0:1', 'signal:b:1:2']),
      signals: new Map([['a', { run_id: 'a', name: 'approval', payload: payload('sender-0', 1), delivered_at: new Date(T) }]]),
    });
    expect(messages(checkTransactions(e))).toEqual([
      'the start in a transaction was answered, but its business row is not there',
      'the run exists without the business row of its transaction',
      'the business row committed without its run',
      'the business row of a rolled-back start is there',
      'a start rolled back with its transaction left a run behind',
      'business row signal:b:1:2 committed, but the run has no signal stored',
    ]);
  });

  it('a rolled-back signal is never stored nor used, and leaves no business row', () => {
    const e = evidence({
      deliveries: [
        {
          runId: 'a',
          kind: 'signal',
          key: 'approval',
          payload: { by: 'rollback-sender-1', copy: 0 },
          sender: 1,
          sentAt: T,
          doneAt: T,
          outcome: 'rolledBack',
          attempts: 1,
          tx: 'rollback',
        },
      ],
      business: new Set(['signal:a:1:0']),
      signals: new Map([['a', { run_id: 'a', name: 'approval', payload: payload('rollback-sender-1', 0), delivered_at: new Date(T) }]]),
    });
    expect(messages(checkTransactions(e))).toEqual([
      'the business row of a rolled-back signal (sender 1) is there',
      `the stored signal is a rolled-back one: ${payload('rollback-sender-1', 0)}`,
    ]);
  });
});

describe('chaos checks: recovery', () => {
  const pause = {
    kind: 'pause',
    phase: 1,
    at: T,
    endAt: T + 5_000,
    worker: 1,
    pid: 42,
    held: ['a'],
  } as unknown as Evidence['faults'][number];

  it('a run a stopped worker held must be taken over during the stop, unless an operator cancelled it meanwhile', () => {
    const untouched = evidence({ faults: [pause], history: new Map([history('a', ['started', T - 100])]) });
    expect(messages(checkRecovery(untouched))).toEqual(['held by the stopped pid 42, never taken over']);
    const cancelled = evidence({ faults: [pause], history: new Map([history('a', ['started', T - 100], ['cancelled', T + 600])]) });
    expect(messages(checkRecovery(cancelled))).toEqual([]);
  });

  it('a run a killed worker held may be cancelled before its lease lapsed; a cancel long after a missed takeover excuses nothing', () => {
    const kill = { ...pause, kind: 'kill', endAt: T + 50 } as typeof pause;
    const cancelledAt = (at: number) =>
      evidence({ faults: [kill], history: new Map([history('a', ['started', T - 100], ['cancelled', at])]) });
    // Cancelled 800 ms after the kill, inside the 2 s lease: nobody was due to take it over yet.
    expect(messages(checkRecovery(cancelledAt(T + 800)))).toEqual([]);
    expect(messages(checkRecovery(cancelledAt(T + 60_000)))).toEqual(['held by the killed pid 42, never taken over']);
  });

  it('a stopped worker may carry on with its run when another worker was killed or the server was down during the stop', () => {
    const runs = new Map([history('a', ['started', T - 100])]);
    const kill = (worker: number, at: number) =>
      ({ kind: 'kill', phase: 1, at, endAt: at + 10, worker, pid: 7 }) as unknown as typeof pause;
    const restart = { kind: 'restart', phase: 1, at: T + 1_000, endAt: T + 2_000, listenBackAt: T + 3_000 } as unknown as typeof pause;
    expect(messages(checkRecovery(evidence({ faults: [pause, kill(2, T + 3_000)], history: runs })))).toEqual([]);
    expect(messages(checkRecovery(evidence({ faults: [pause, restart], history: runs })))).toEqual([]);
    // A kill whose worker was back long before the stop excuses nothing.
    expect(messages(checkRecovery(evidence({ faults: [pause, kill(2, T - 60_000)], history: runs })))).toEqual([
      'held by the stopped pid 42, never taken over',
    ]);
  });
});

describe('chaos checks: queues', () => {
  const claimed = (at: number) => ['claimed', at, { queue: 'chaos-children' }] as [string, number, Record<string, unknown>];
  it('a queue is never over its concurrency, counted from admissions (or starts in a slot) to the events that leave running, kills and takeovers included', () => {
    // Two admitted, one parks, a third is admitted; the second is taken over (it keeps its slot) and ends.
    const within = evidence({
      history: new Map([
        history('a', claimed(T), ['parked', T + 100]),
        history('b', claimed(T + 10), ['lease-taken-over', T + 400], ['completed', T + 500]),
        history('c', claimed(T + 200), ['completed', T + 300]),
      ]),
    });
    expect(messages(checkQueues(within))).toEqual([]);
    expect(checkQueues(within).metrics).toEqual({
      'chaos-children.admissions': 3,
      'chaos-children.mostRunning': 2,
      'chaos-orders.admissions': 0,
      'chaos-orders.mostRunning': 0,
    });
    // A third admitted while two still run (the taken-over one included) is a violation.
    const over = evidence({
      history: new Map([
        history('a', claimed(T), ['completed', T + 600]),
        history('b', claimed(T + 10), ['lease-taken-over', T + 400], ['completed', T + 500]),
        history('c', claimed(T + 450), ['completed', T + 460]),
      ]),
    });
    expect(messages(checkQueues(over))).toEqual([expect.stringMatching(/with 3 runs of queue chaos-children running \(concurrency 2\)$/)]);
    // A run that took its slot at its start (`started` naming the queue) counts from that start.
    const startedInSlot = evidence({
      history: new Map([
        history('a', ['started', T, { queue: 'chaos-children' }], ['completed', T + 600]),
        history('b', claimed(T + 10), ['completed', T + 500]),
        history('c', ['started', T + 450, { queue: 'chaos-children' }], ['completed', T + 460]),
        history('d', ['started', T + 20], ['completed', T + 30]), // not in the queue: no slot
      ]),
    });
    expect(messages(checkQueues(startedInSlot))).toEqual([expect.stringMatching(/with 3 runs of queue chaos-children running/)]);
    // Each queue against its own concurrency: one order more than the orders queue's started in slots together is over it.
    const { concurrency } = CHAOS_ORDER_QUEUE;
    const startedTogether = (n: number) =>
      evidence({
        history: new Map(
          Array.from({ length: n }, (_, i) => history(`o${i}`, ['started', T, { queue: 'chaos-orders' }], ['completed', T + 100])),
        ),
      });
    expect(messages(checkQueues(startedTogether(concurrency)))).toEqual([]);
    expect(checkQueues(startedTogether(concurrency)).metrics).toMatchObject({
      'chaos-orders.admissions': concurrency,
      'chaos-orders.mostRunning': concurrency,
    });
    expect(messages(checkQueues(startedTogether(concurrency + 1)))).toEqual([
      `admitted at ${iso(T)} with ${concurrency + 1} runs of queue chaos-orders running (concurrency ${concurrency})`,
    ]);
  });
});

const iso = (ms: number) => new Date(ms).toISOString();

/** A run the schedule planned, with its deliveries. */
function planned(id: string, deliveries: PlannedDelivery[], extra: Partial<PlannedRun> = {}): PlannedRun {
  return {
    id,
    at: 0,
    input: { napMs: 1_000, signalTimeoutMs: 30_000 },
    signalMode: 'normal',
    messages: [],
    deliveries,
    startVia: 'client',
    role: 'plain',
    ...extra,
  };
}

/** Copy `n` of a signal or message, from sender `sender`. */
function copy(
  kind: PlannedDelivery['kind'],
  key: string,
  sender: number,
  n: number,
  payload: Record<string, unknown> = {},
): PlannedDelivery {
  return { at: 0, sender, kind, key, payload: { ...payload, by: `sender-${sender}`, copy: n } };
}

/** The driver's record of one copy: in flight from `sentAt` (its first try) to `doneAt` (its answer). */
function answer(
  runId: string,
  d: PlannedDelivery,
  outcome: DeliveryRecord['outcome'],
  sentAt: number,
  doneAt: number,
  extra: Partial<DeliveryRecord> = {},
): DeliveryRecord {
  return { runId, kind: d.kind, key: d.key, payload: d.payload, sender: d.sender, sentAt, doneAt, outcome, attempts: 1, ...extra };
}

/** The signal stored for a run, and its history event. */
function storedSignal(runId: string, payload: Record<string, unknown>, at: number) {
  return {
    signals: new Map([[runId, { run_id: runId, name: 'approval', payload: serialize(payload, 'approval'), delivered_at: new Date(at) }]]),
    history: new Map([history(runId, ['signal-delivered', at, { name: 'approval' }])]),
  };
}

function ledgerRow(id: number, runId: string, key: string, pid: number, at: number, detail: Record<string, unknown> = {}): LedgerRow {
  return { id, run_id: runId, step_key: key, pid, at: new Date(at), detail };
}

/** A step checkpoint naming ledger row `ledgerId` of `pid`. */
function effectStep(key: string, pid: number, ledgerId: number, committedAt: number): [string, StepRow] {
  return [key, { key, kind: 'step', outcome: 'ok', result: serialize({ pid, ledgerId }, key), committedAt }];
}

/** A timer's journaled instant. */
function instant(key: string, at: number): [string, StepRow] {
  return [key, { key, kind: 'sleep', outcome: 'ok', result: serialize(new Date(at), key), committedAt: at - 1_000 }];
}

describe('chaos checks: signals', () => {
  const c1 = copy('signal', 'approval', 0, 1);
  const c2 = copy('signal', 'approval', 1, 2);

  it('a signal answered accepted and then as a duplicate, yet never stored, is lost', () => {
    const e = evidence({
      planned: [planned('a', [c1, c2])],
      starts: [start('a')],
      runs: new Map([run('a', 'waiting')]),
      deliveries: [answer('a', c1, 'accepted', T, T + 10), answer('a', c2, 'duplicate', T + 20, T + 30)],
    });
    const result = checkSignals(e);
    expect(messages(result)).toEqual([
      'lost: signal approval was never stored, yet not every copy was refused for a confirmed reason (answers: accepted 1, duplicate 1)',
    ]);
    expect(result.metrics.lost).toBe(1);
  });

  it('a refusal counts only when the history confirms it: the run closed, or was deleted, before the answer', () => {
    const c3 = copy('signal', 'approval', 0, 3);
    const c4 = copy('signal', 'approval', 1, 4);
    const e = evidence({
      planned: [planned('a', [c1, c2, c3, c4]), planned('b', [c1, c2])],
      starts: [start('a'), start('b')],
      runs: new Map([run('a', 'cancelled', { deleted_at: new Date(T + 2_000) }), run('b', 'cancelled')]),
      history: new Map([history('a', ['cancelled', T + 500]), history('b', ['cancelled', T + 500])]),
      deliveries: [
        answer('a', c1, 'closed', T, T + 100),
        answer('a', c2, 'closed', T + 500, T + 600),
        answer('a', c3, 'gone', T + 2_000, T + 2_100),
        answer('a', c4, 'gone', T + 900, T + 1_000),
        answer('b', c1, 'closed', T + 500, T + 600),
        answer('b', c2, 'closed', T + 700, T + 800),
      ],
    });
    const result = checkSignals(e);
    expect(messages(result)).toEqual([
      `signal approval copy 1 from sender-0 was refused as closed at ${iso(T + 100)}, but the run closed only at ${iso(T + 500)}`,
      `signal approval copy 4 from sender-1 was refused as deleted at ${iso(T + 1_000)}, but the run was deleted only at ${iso(T + 2_000)}`,
      'lost: signal approval was never stored, yet not every copy was refused for a confirmed reason (answers: closed 2, gone 2)',
    ]);
    expect(result.metrics).toMatchObject({ lost: 1, refused: 4, deliveries: 6 });
  });

  it('a copy the library never answered is a violation, even when another copy stored the signal', () => {
    const e = evidence({
      planned: [planned('a', [c1, c2])],
      starts: [start('a')],
      runs: new Map([run('a', 'waiting')]),
      ...storedSignal('a', c1.payload, T + 5),
      deliveries: [
        answer('a', c1, 'accepted', T, T + 10),
        answer('a', c2, 'failed', T, T + 20_000, { attempts: 40, error: 'Timeout: no reply in 10000 ms' }),
      ],
    });
    expect(messages(checkSignals(e))).toEqual([
      'signal approval copy 2 from sender-1 got no answer in 40 tries: Timeout: no reply in 10000 ms',
    ]);
  });

  it('a duplicate answered before the signal was stored, and a signal stored while its copy was not in flight or after the run closed, are caught', () => {
    const early = evidence({
      planned: [planned('a', [c1, c2])],
      starts: [start('a')],
      runs: new Map([run('a', 'waiting')]),
      ...storedSignal('a', c2.payload, T + 55),
      deliveries: [answer('a', c1, 'duplicate', T, T + 10), answer('a', c2, 'accepted', T + 50, T + 60)],
    });
    expect(messages(checkSignals(early))).toEqual([
      `signal approval copy 1 from sender-0 was answered as a duplicate at ${iso(T + 10)}, before the signal was stored (${iso(T + 55)})`,
    ]);
    const late = evidence({
      planned: [planned('b', [c1])],
      starts: [start('b')],
      runs: new Map([run('b', 'cancelled')]),
      signals: storedSignal('b', c1.payload, T + 200).signals,
      history: new Map([history('b', ['cancelled', T + 100], ['signal-delivered', T + 200, { name: 'approval' }])]),
      deliveries: [answer('b', c1, 'accepted', T, T + 10)],
    });
    expect(messages(checkSignals(late))).toEqual([
      `signal approval was stored at ${iso(T + 200)}, while the copy whose payload it holds was not in flight (sent ${iso(T)}, answered ${iso(T + 10)})`,
      `signal approval was stored at ${iso(T + 200)}, after the run closed at ${iso(T + 100)}`,
    ]);
  });

  it('a run planned without a signal has none stored and uses none', () => {
    const payload = { by: 'sender-0', copy: 1 };
    const e = evidence({
      planned: [planned('a', [], { signalMode: 'none' })],
      starts: [start('a')],
      runs: new Map([run('a', 'completed')]),
      ...storedSignal('a', payload, T + 5),
      ledger: new Map([
        ['a', new Map([['apply-approval', [ledgerRow(7, 'a', 'apply-approval', 10, T + 10, { received: true, payload })]]])],
      ]),
      steps: new Map([['a', new Map([effectStep('apply-approval', 10, 7, T + 20)])]]),
    });
    expect(messages(checkSignals(e))).toEqual([
      'stored signal approval payload {"by":"sender-0","copy":1} is none that a planned copy carried',
      'the run was planned without a signal, yet it used {"by":"sender-0","copy":1}',
    ]);
  });

  it('a run that timed out though its signal was stored before the deadline lost it', () => {
    const e = evidence({
      planned: [planned('a', [c1])],
      starts: [start('a')],
      runs: new Map([run('a', 'completed')]),
      ...storedSignal('a', c1.payload, T + 100),
      deliveries: [answer('a', c1, 'accepted', T + 90, T + 110)],
      ledger: new Map([['a', new Map([['apply-approval', [ledgerRow(7, 'a', 'apply-approval', 10, T + 6_000, { received: false })]]])]]),
      steps: new Map([
        [
          'a',
          new Map([
            effectStep('apply-approval', 10, 7, T + 6_010),
            instant('signal-deadline:approval', T + 5_000),
            step('signal-deadline:approval:timed-out', T + 5_100),
          ]),
        ],
      ]),
    });
    const result = checkSignals(e);
    expect(messages(result)).toEqual([`lost: delivered at ${iso(T + 100)}, before the deadline ${iso(T + 5_000)}, yet the run timed out`]);
    expect(result.metrics.lost).toBe(1);
  });
});

describe('chaos checks: channels', () => {
  const m1 = copy('message', 'm1', 0, 1, { n: 1 });
  const close = copy('message', 'close', 1, 1, { n: 0, close: true });
  const row = (runId: string, d: PlannedDelivery, seq: number) => ({
    run_id: runId,
    key: d.key,
    seq,
    payload: serialize(d.payload, d.key),
    acked_at: null,
  });

  it('a completed run whose planned message was accepted but never stored lost it', () => {
    const e = evidence({
      planned: [planned('a', [m1, close], { messages: ['m1'] })],
      starts: [start('a')],
      runs: new Map([run('a', 'completed')]),
      messages: new Map([['a', [row('a', close, 1)]]]),
      history: new Map([history('a', ['message-sent', T + 105, { channel: 'events', key: 'close' }], ['completed', T + 1_000])]),
      deliveries: [answer('a', m1, 'accepted', T, T + 10), answer('a', close, 'accepted', T + 100, T + 110)],
    });
    const result = checkChannels(e);
    expect(messages(result)).toEqual([
      'lost: message m1 was never stored, yet not every copy was refused for a confirmed reason (answers: accepted 1)',
    ]);
    expect(result.metrics.lost).toBe(1);
  });

  it('a message answered before the close went out must be stored ahead of it', () => {
    const e = evidence({
      planned: [planned('a', [m1, close], { messages: ['m1'] })],
      starts: [start('a')],
      runs: new Map([run('a', 'completed')]),
      messages: new Map([['a', [row('a', close, 1), row('a', m1, 2)]]]),
      history: new Map([
        history(
          'a',
          ['message-sent', T + 15, { channel: 'events', key: 'm1' }],
          ['message-sent', T + 105, { channel: 'events', key: 'close' }],
          ['completed', T + 1_000],
        ),
      ]),
      deliveries: [answer('a', m1, 'accepted', T + 10, T + 20), answer('a', close, 'accepted', T + 100, T + 110)],
    });
    expect(messages(checkChannels(e))).toEqual([
      'message m1 (seq 2) was answered before the close went out, yet it is stored after it (seq 1)',
    ]);
  });
});

describe('chaos checks: effects', () => {
  const processes = [
    { role: 'worker-0', pid: 10, readyAt: T - 60_000 },
    { role: 'worker-1', pid: 11, readyAt: T - 60_000 },
    { role: 'sender-1', pid: 30, readyAt: T - 60_000 },
  ];
  const kill = (pid: number, at: number): FaultRecord => ({ kind: 'kill', phase: 0, at, endAt: at + 50, worker: 0, pid });
  const pause = (pid: number, at: number, endAt: number): FaultRecord => ({ kind: 'pause', phase: 0, at, endAt, worker: 0, pid });
  const cut = (targets: 'workers' | 'senders', at: number): FaultRecord => ({
    kind: 'connections',
    phase: 0,
    at,
    endAt: at + 4_000,
    lastCutAt: at + 500,
    targets,
  });
  const restart = (at: number): FaultRecord => ({ kind: 'restart', phase: 0, at, endAt: at + 1_400 });

  /** Step charge of run a: effects by pid 10 at `lost` (unconfirmed), then by pid 11 at `win`, checkpointed 300 ms later. */
  function duplicate(faults: FaultRecord[], { lost = [T], win = T + 3_000, more = {} as Partial<Evidence> } = {}) {
    const rows = [...lost.map((at, i) => ledgerRow(100 + i, 'a', 'charge', 10, at)), ledgerRow(1, 'a', 'charge', 11, win)];
    return checkEffects(
      evidence({
        processes,
        faults,
        runs: new Map([run('a', 'completed')]),
        ledger: new Map([['a', new Map([['charge', rows]])]]),
        steps: new Map([['a', new Map([effectStep('charge', 11, 1, win + 300)])]]),
        ...more,
      }),
    );
  }
  const excused = (result: CheckResult) => [result.metrics.inWindow, result.metrics.outside];

  it('a duplicate with no fault at all is outside any window', () => {
    const result = duplicate([]);
    expect(messages(result)).toEqual([
      `step charge ran again outside any crash window: effect 100 by pid 10 at ${iso(T)} lost to 1 by pid 11 (checkpoint committed at ${iso(T + 3_300)}), and no fault on pid 10 struck between that effect and the checkpoint or the takeover of its run`,
    ]);
  });

  it('a kill excuses a duplicate only on the pid that wrote it, soon after the effect, one per step of a run', () => {
    expect(excused(duplicate([kill(10, T + 200)]))).toEqual([1, 0]);
    expect(duplicate([kill(10, T + 200)]).metrics['inWindow.kill']).toBe(1);
    // Long after the effect its checkpoint would have committed: the kill is not why it went unconfirmed.
    expect(excused(duplicate([kill(10, T + CRASH_MS + 500)], { win: T + 8_000 }))).toEqual([0, 1]);
    expect(excused(duplicate([kill(11, T + 200)]))).toEqual([0, 1]);
    expect(excused(duplicate([kill(10, T + 200)], { lost: [T, T + 100] }))).toEqual([1, 1]);
  });

  it('a kill excuses one lost effect per step of a run: parallel steps in flight at once are each excused', () => {
    const effects = (key: string, lostAt: number, id: number) => [
      ledgerRow(id, 'a', key, 10, lostAt),
      ledgerRow(id + 1, 'a', key, 11, T + 3_000),
    ];
    const result = checkEffects(
      evidence({
        processes,
        faults: [kill(10, T + 200)],
        runs: new Map([run('a', 'completed')]),
        ledger: new Map([
          [
            'a',
            new Map([
              ['notify:buyer', effects('notify:buyer', T, 100)],
              ['notify:carrier', effects('notify:carrier', T + 10, 200)],
            ]),
          ],
        ]),
        steps: new Map([
          ['a', new Map([effectStep('notify:buyer', 11, 101, T + 3_300), effectStep('notify:carrier', 11, 201, T + 3_300)])],
        ]),
      }),
    );
    expect(excused(result)).toEqual([2, 0]);
  });

  it('a fault after the takeover that ended the hold of the effect did not cause the re-run', () => {
    const more = {
      history: new Map([
        history('a', ['claimed', T - 500, undefined, 'h:10:a'], ['lease-taken-over', T + 100, { previousOwner: 'h:10:a' }, 'h:11:b']),
      ]),
    };
    expect(excused(duplicate([kill(10, T + 200)], { win: T + 150, more }))).toEqual([0, 1]);
    expect(excused(duplicate([kill(10, T + 50)], { win: T + 150, more }))).toEqual([1, 0]);
  });

  it('a connection fault excuses only the processes whose sessions it cut, a restart any, both only around the effect', () => {
    expect(excused(duplicate([cut('senders', T + 100)]))).toEqual([0, 1]);
    expect(excused(duplicate([cut('workers', T + 100)]))).toEqual([1, 0]);
    expect(excused(duplicate([restart(T + 100)]))).toEqual([1, 0]);
    expect(excused(duplicate([restart(T + 5_000)], { win: T + 8_000 }))).toEqual([0, 1]);
    // A restart long over before the effect (its leases renewed since) excuses nothing.
    expect(excused(duplicate([restart(T - 10_000)]))).toEqual([0, 1]);
  });

  it('a stopped process that finishes its step after SIGCONT, once the run moved on, is excused; one that wrote it long after is not', () => {
    expect(excused(duplicate([pause(10, T - 6_000, T - 100)], { win: T - 3_000 }))).toEqual([1, 0]);
    expect(excused(duplicate([pause(10, T - 8_000, T - 3_000)], { win: T - 5_000 }))).toEqual([0, 1]);
  });

  it("reports which share of the executing processes' time the crash windows cover", () => {
    const e = evidence({
      processes: [
        { role: 'worker-0', pid: 10, readyAt: T },
        { role: 'sender-1', pid: 30, readyAt: T },
      ],
      samples: [{ at: T + 100_000, listeners: 0, up: 0 }],
      faults: [kill(10, T + 50_000), cut('senders', T + 20_000)],
    });
    // One kill: from CRASH_MS before it to 250 ms after the process was gone, 1.3 s of 100 s; the
    // senders' cut touches no process that executes (sender-1 only delivers).
    expect(checkEffects(e).metrics).toMatchObject({ coverage: 1.3, 'coverage.kill': 1.3, 'coverage.connections': 0 });
  });
});

describe('chaos checks: fencing', () => {
  it('a checkpoint or an end written by a worker after its lease was taken over is caught, unless it claimed the run back first', () => {
    const takenOver = ['lease-taken-over', T + 1_000, { previousOwner: 'h:10:x' }, 'h:11:y'] as const;
    const late = history('a', ['claimed', T, undefined, 'h:10:x'], [...takenOver], ['completed', T + 1_200, undefined, 'h:10:x']);
    const back = history(
      'b',
      ['claimed', T, undefined, 'h:10:x'],
      [...takenOver],
      ['claimed', T + 1_100, undefined, 'h:10:x'],
      ['completed', T + 1_600, undefined, 'h:10:x'],
    );
    const e = evidence({
      history: new Map([late, back]),
      steps: new Map([
        ['a', new Map([effectStep('charge', 10, 1, T + 1_500)])],
        ['b', new Map([effectStep('charge', 10, 2, T + 1_500)])],
      ]),
    });
    expect(messages(checkFencing(e))).toEqual([
      `completed written by h:10:x after its lease was taken over (history ${late[1][1].id} → ${late[1][2].id})`,
      'checkpoint charge by pid 10 committed 500.0 ms after its lease was taken over',
    ]);
  });
});

describe('chaos checks: stuck runs', () => {
  it('a run found overdue at a quiet moment, left overdue at the end, or parked on what already arrived, is stuck', () => {
    const e = evidence({
      starts: [start('a'), start('b'), start('c')],
      stuck: [{ at: T, runId: 'q', status: 'waiting', overdueMs: 900, wait: { kind: 'sleep' } }],
      samples: [{ at: T + 10_000, listeners: 3, up: 3 }],
      runs: new Map([
        run('a', 'waiting', { wake_at: new Date(T) }),
        run('b', 'waiting', { wait: { kind: 'signal', name: 'approval' } }),
        run('c', 'waiting', { wake_at: new Date(T + 9_900) }),
      ]),
      signals: storedSignal('b', { by: 'sender-0', copy: 1 }, T).signals,
    });
    expect(messages(checkStuck(e))).toEqual([
      `waiting and overdue by 900 ms at a quiet moment (${iso(T)}), waiting {"kind":"sleep"}`,
      `left waiting at the end: wake_at ${iso(T)}, waiting null`,
      'left waiting at the end: wake_at none, waiting {"kind":"signal","name":"approval"}, which already arrived',
    ]);
  });
});

describe('chaos checks: timers', () => {
  it('a sleep that ended early, a timeout before its deadline, and a completed run without its timer records are caught', () => {
    const e = evidence({
      starts: [start('a'), start('b'), start('c')],
      runs: new Map([
        run('a', 'completed'),
        run('a/child', 'completed', { parent_id: 'a' }),
        run('b', 'completed'),
        run('b/child', 'completed', { parent_id: 'b' }),
        run('c', 'completed'),
      ]),
      ledger: new Map([
        ['a', new Map([['after-nap', [ledgerRow(1, 'a', 'after-nap', 10, T + 500)]]])],
        ['a/child', new Map([['ship', [ledgerRow(2, 'a/child', 'ship', 10, T + 2_000)]]])],
      ]),
      steps: new Map([
        [
          'a',
          new Map([
            instant('sleep:nap', T + 1_000),
            effectStep('after-nap', 10, 1, T + 510),
            instant('signal-deadline:approval', T + 5_000),
            step('signal-deadline:approval:timed-out', T + 4_000),
          ]),
        ],
        ['a/child', new Map([instant('sleep:settle', T + 1_500), effectStep('ship', 10, 2, T + 2_010)])],
        ['c', new Map([instant('sleep:nap', T + 1_000)])],
      ]),
    });
    const result = checkTimers(e);
    expect(result.violations.map((v) => `${v.runId}: ${v.message}`)).toEqual([
      `a: the effect of after-nap is at ${iso(T + 500)}, before sleep:nap ${iso(T + 1_000)}`,
      `a: the timeout checkpoint is at ${iso(T + 4_000)}, before signal-deadline:approval ${iso(T + 5_000)}`,
      'b: sleep:nap has no journaled instant: the timer cannot be checked',
      'b/child: sleep:settle has no journaled instant: the timer cannot be checked',
      'c: sleep:nap is journaled, but the effect of after-nap is missing: the timer cannot be checked',
    ]);
    expect(result.metrics.timers).toBe(3);
  });
});

describe('chaos checks: minimums', () => {
  const struck: FaultRecord[] = [
    { kind: 'kill', phase: 0, at: T, endAt: T + 50, worker: 0, pid: 10, inWindow: { runId: 'a', stepKey: 'charge', ledgerId: 1 } },
    { kind: 'kill', phase: 0, at: T + 5_000, endAt: T + 5_050, worker: 1, pid: 11 },
    { kind: 'pause', phase: 1, at: T + 10_000, endAt: T + 16_000, worker: 2, pid: 12 },
    { kind: 'connections', phase: 2, at: T + 20_000, endAt: T + 24_000, targets: 'workers' },
    { kind: 'connections', phase: 2, at: T + 30_000, endAt: T + 34_000, targets: 'senders' },
    { kind: 'restart', phase: 3, at: T + 40_000, endAt: T + 41_000 },
  ];
  const d = copy('message', 'm1', 0, 1, { n: 1 });
  const during = Array.from({ length: 60 }, () => answer('a', d, 'duplicate', T + 20_500, T + 20_600));
  /** Checkpoints committed two by two (group commit): `pairs` runs whose two notices share one commit. */
  const batched = (pairs: number) =>
    new Map(
      Array.from({ length: pairs }, (_, n): [string, Map<string, StepRow>] => [
        `b${n}`,
        new Map([step('notify:buyer', T + n), step('notify:seller', T + n)]),
      ]),
    );
  /** Runs started `together` at a time in one commit (group commit of starts), `groups` times. */
  const startedTogether = (groups: number, together = 2) =>
    new Map(Array.from({ length: groups * together }, (_, n) => history(`s${n}`, ['started', T + Math.floor(n / together)])));
  /** Runs started in a slot of the orders queue, `together` of them in one commit. */
  const queuedTogether = (together: number) =>
    new Map(Array.from({ length: together }, (_, n) => history(`q${n}`, ['started', T + 100, { queue: 'chaos-orders' }])));
  /** Enough of both. */
  const startsBatched = () => new Map([...startedTogether(2), ...queuedTogether(2)]);
  const results = (handled: number) =>
    ({
      fencing: { violations: [], metrics: { takeovers: 1 } },
      timers: { violations: [], metrics: { timers: 120 } },
      children: { violations: [], metrics: { spawned: 60 } },
      channels: { violations: [], metrics: { handled } },
    }) satisfies Parameters<typeof checkMinimums>[1];

  it('a session that reached every minimum passes them; one below any fails, saying which', () => {
    expect(
      messages(checkMinimums(evidence({ faults: struck, deliveries: during, steps: batched(10), history: startsBatched() }), results(150))),
    ).toEqual([]);
    const short = checkMinimums(
      evidence({
        faults: struck.filter((f) => f.pid !== 11),
        deliveries: during,
        steps: batched(9),
        history: new Map([...startedTogether(1, 3), history('lone', ['started', T + 50]), ...queuedTogether(1)]),
      }),
      results(149),
    );
    expect(messages(short)).toEqual([
      'kills: 1, below the 2 that 1 cycle(s) of the ci profile must reach; the session proves too little to pass',
      'channel messages handled: 149, below the 150 that 1 cycle(s) of the ci profile must reach; the session proves too little to pass',
      'checkpoints committed in one batch with others (group commit): 18, below the 20 that 1 cycle(s) of the ci profile must reach; the session proves too little to pass',
      'starts committed in one batch with others (group commit): 3, below the 4 that 1 cycle(s) of the ci profile must reach; the session proves too little to pass',
      'queued starts committed in one batch with others, each in a slot it took there: 0, below the 2 that 1 cycle(s) of the ci profile must reach; the session proves too little to pass',
    ]);
    expect(short.metrics).toMatchObject({
      kill: 1,
      'kill.min': 2,
      messagesHandled: 149,
      'messagesHandled.min': 150,
      batchedCheckpoints: 18,
      batchedStarts: 3,
      batchedQueuedStarts: 0,
    });
  });

  it('a kill cued by an effect whose checkpoint had committed before it did not strike inside a step', () => {
    const e = evidence({
      faults: struck,
      deliveries: during,
      steps: new Map([...batched(10), ['a', new Map([effectStep('charge', 10, 1, T - 10)])]]),
      history: startsBatched(),
    });
    expect(messages(checkMinimums(e, results(150)))).toEqual([
      'kills inside a step (after its effect, before its checkpoint): 0, below the 1 that 1 cycle(s) of the ci profile must reach; the session proves too little to pass',
    ]);
  });

  it('the minimums grow with the cycles a session ran, and an empty session never passes', () => {
    const twice = checkMinimums(evidence({ faults: struck, deliveries: during, phases: 2 * profile.cycle.length }), results(150));
    expect(twice.metrics).toMatchObject({ cycles: 2, 'kill.min': 4 });
    expect(twice.violations).toHaveLength(13);
    const verdict = check(evidence({}));
    expect(verdict.violations.filter((v) => v.check === 'minimums')).toHaveLength(13);
  });
});
