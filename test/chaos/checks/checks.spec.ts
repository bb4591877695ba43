import { serialize } from 'nestjs-durable/schema/serializer';
import { parseOptions } from '../profiles';
import type { Evidence, HistoryRow, RunRow, StepRow } from './data';
import { checkOperator } from './operator';
import { checkQueues } from './queues';
import { checkRecovery } from './recovery';
import { checkRetention } from './retention';
import { checkTerminal } from './terminal';
import { checkTransactions } from './transactions';

/** The checks of operator actions, retention and application transactions, on records made by hand: each catches what it promises to, and passes what is fine. */
const { profile } = parseOptions(['--profile', 'ci', '--seed', '1']);
const T = 1_000_000;

function evidence(parts: Partial<Evidence>): Evidence {
  return {
    profile,
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
function history(runId: string, ...events: Array<[string, number, Record<string, unknown>?]>): [string, HistoryRow[]] {
  return [
    runId,
    events.map(([event, at, detail]) => ({
      id: nextId++,
      run_id: runId,
      at: new Date(at),
      event,
      actor: 'test',
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
  it('a queue is never over its concurrency, counted from admissions to the events that leave running, kills and takeovers included', () => {
    // Two admitted, one parks, a third is admitted; the second is taken over (it keeps its slot) and ends.
    const within = evidence({
      history: new Map([
        history('a', claimed(T), ['parked', T + 100]),
        history('b', claimed(T + 10), ['lease-taken-over', T + 400], ['completed', T + 500]),
        history('c', claimed(T + 200), ['completed', T + 300]),
      ]),
    });
    expect(messages(checkQueues(within))).toEqual([]);
    expect(checkQueues(within).metrics).toEqual({ admissions: 3, mostRunning: 2 });
    // A third admitted while two still run (the taken-over one included) is a violation.
    const over = evidence({
      history: new Map([
        history('a', claimed(T), ['completed', T + 600]),
        history('b', claimed(T + 10), ['lease-taken-over', T + 400], ['completed', T + 500]),
        history('c', claimed(T + 450), ['completed', T + 460]),
      ]),
    });
    expect(messages(checkQueues(over))).toEqual([expect.stringMatching(/with 3 runs of queue chaos-children running \(concurrency 2\)$/)]);
  });
});
