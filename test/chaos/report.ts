import { CHAOS_QUEUES } from './chaos.workflows';
import type { Verdict } from './checker';
import type { Evidence, Violation } from './checks/data';
import { MINIMUM_LABELS } from './checks/minimums';
import type { Minimums } from './profiles';

export interface RunFacts {
  seed: number;
  profile: string;
  minutes?: number;
  seconds: number;
  phases: Array<{ name: string; fingerprint: string }>;
  bootRetries: number;
}

/** The summary table (markdown, so it can go straight into docs/reliability.md). */
export function summaryTable(facts: RunFacts, e: Evidence, v: Verdict): string {
  const r = v.results;
  const done = e.faults.filter((f) => !f.skipped);
  const count = (kind: string) => done.filter((f) => f.kind === kind);
  const cuts = count('connections');
  const m = (check: keyof Verdict['results'], key: string) => r[check].metrics[key];
  const rows: Array<[string, string | number]> = [
    ['seed', facts.seed],
    ['profile', facts.minutes ? `${facts.profile} (${facts.minutes} min)` : facts.profile],
    ['wall time', `${facts.seconds} s`],
    ['phases', `${facts.phases.length} (${[...new Set(facts.phases.map((p) => p.name))].join(', ')})`],
    [
      'runs (+ their children)',
      `${e.starts.length} (+ ${m('terminal', 'children')}): completed ${m('terminal', 'completed')}, cancelled ${m('terminal', 'cancelled')}`,
    ],
    [
      'signal and message deliveries',
      `${e.deliveries.length} (accepted ${e.deliveries.filter((d) => d.outcome === 'accepted').length}, redeliveries ${e.deliveries.filter((d) => d.outcome === 'duplicate').length}, to closed runs ${e.deliveries.filter((d) => d.outcome === 'closed').length}, to deleted runs ${e.deliveries.filter((d) => d.outcome === 'gone').length}, failed ${e.deliveries.filter((d) => d.outcome === 'failed').length})`,
    ],
    ['kills (cued inside a crash window)', `${count('kill').length} (${count('kill').filter((f) => f.inWindow).length})`],
    [
      'pauses (runs they held, each taken over)',
      `${count('pause').length} (${count('pause').reduce((n, f) => n + (f.held?.length ?? 0), 0)})`,
    ],
    [
      'connection kills: bursts (sessions cut); bursts on workers / senders / both',
      `${cuts.length} (${cuts.reduce((n, f) => n + (f.terminated ?? 0), 0)}); ${(['workers', 'senders', 'both'] as const).map((t) => cuts.filter((f) => f.targets === t).length).join(' / ')}`,
    ],
    ['server restarts', count('restart').length],
    ['skipped faults', e.faults.length - done.length],
    ['step effects checked', m('effects', 'steps')],
    [
      'duplicate effects inside the window (kill / pause / connections / restart)',
      `${m('effects', 'inWindow')} (${m('effects', 'inWindow.kill')} / ${m('effects', 'inWindow.pause')} / ${m('effects', 'inWindow.connections')} / ${m('effects', 'inWindow.restart')})`,
    ],
    ['duplicate effects outside it (must be 0)', m('effects', 'outside')],
    [
      "share of the executing processes' time inside a fault's crash window: all (kill / pause / connections / restart)",
      `${m('effects', 'coverage')} % (${m('effects', 'coverage.kill')} / ${m('effects', 'coverage.pause')} / ${m('effects', 'coverage.connections')} / ${m('effects', 'coverage.restart')} %)`,
    ],
    [
      'effect to checkpoint commit: p50 / p99 / max',
      `${m('effects', 'checkpoint.p50')} / ${m('effects', 'checkpoint.p99')} / ${m('effects', 'checkpoint.max')} ms`,
    ],
    [
      'lease takeovers checked for late writes (late writes accepted: must be 0)',
      `${m('fencing', 'takeovers')} (${r.fencing.violations.length})`,
    ],
    ['takeovers of a lapsed lease by its own worker', m('fencing', 'ownTakeovers')],
    ['runs that spent attempts on transient errors (most attempts)', `${m('terminal', 'retried')} (${m('terminal', 'maxAttempt')})`],
    [
      'planned signal copies held to their answer (refusals confirmed by the history) / message copies (refusals)',
      `${m('signals', 'deliveries')} (${m('signals', 'refused')}) / ${m('channels', 'deliveries')} (${m('channels', 'refused')})`,
    ],
    ['lost signals (must be 0)', m('signals', 'lost')],
    ['lost channel messages (must be 0)', m('channels', 'lost')],
    [
      'signals received / timed out; received by planned mode: early / normal / late / none (must be 0)',
      `${m('signals', 'received')} / ${m('signals', 'timedOut')}; ${(['early', 'normal', 'late', 'none'] as const).map((mode) => m('signals', `received.${mode}`) ?? 0).join(' / ')}`,
    ],
    ['stuck runs (must be 0)', `${m('stuck', 'stuck')} (quiet checks: ${m('stuck', 'quietChecks')})`],
    ['slowest recovery', `${m('recovery', 'slowestMs')} ms: ${m('recovery', 'slowest')}`],
    [
      'wake latency, LISTEN up: p50 / p95 / max (n)',
      `${m('wakes', 'up.p50')} / ${m('wakes', 'up.p95')} / ${m('wakes', 'up.max')} ms (${m('wakes', 'up.n')})`,
    ],
    [
      'wake latency, LISTEN down: p50 / p95 / max (n)',
      `${m('wakes', 'down.p50')} / ${m('wakes', 'down.p95')} / ${m('wakes', 'down.max')} ms (${m('wakes', 'down.n')})`,
    ],
    ['runs claimed by the delivery that woke them (deliver-and-claim)', m('wakes', 'claimedByDelivery')],
    [
      'operator actions: cancel / resume / retry (answers accepted / refused / no answer)',
      (['cancel', 'resume', 'retry'] as const).map((op) => operatorCount(e, op)).join('; '),
    ],
    [
      'operator actions by way: WorkflowClient / REST / REST bulk (runs)',
      (['client', 'rest', 'bulk'] as const).map((via) => e.operations.filter((o) => o.via === via).length).join(' / '),
    ],
    ['runs cancelled by an operator (children cancelled with them)', `${m('operator', 'cancelled')} (${m('operator', 'cascaded')})`],
    ['failed runs retried by an operator, each ended / resumes recorded', `${m('operator', 'retried')} / ${m('operator', 'resumed')}`],
    [
      'starts in an application transaction: committed / rolled back on purpose',
      `${m('transactions', 'txStarts')} / ${m('transactions', 'rolledBackStarts')}`,
    ],
    [
      'signals in an application transaction: business rows committed / rolled back on purpose',
      `${m('transactions', 'txSignals')} / ${m('transactions', 'rolledBackSignals')}`,
    ],
    [
      'runs deleted by retention: completed / cancelled (children among them)',
      `${m('retention', 'completed')} / ${m('retention', 'cancelled')} (${m('retention', 'children')})`,
    ],
    ...CHAOS_QUEUES.map((q): [string, string] => [
      `queue ${q.name}: admissions / most running at once (concurrency ${q.concurrency})`,
      `${m('queues', `${q.name}.admissions`)} / ${m('queues', `${q.name}.mostRunning`)}`,
    ]),
    ['worker boots retried (server down)', facts.bootRetries],
    ...(Object.keys(MINIMUM_LABELS) as Array<keyof Minimums>).map((key): [string, string] => [
      `minimum: ${MINIMUM_LABELS[key]}`,
      `${m('minimums', key)} (at least ${m('minimums', `${key}.min`)})`,
    ]),
    ['violations', v.violations.length],
  ];
  return ['| figure | value |', '| --- | --- |', ...rows.map(([k, val]) => `| ${k} | ${val} |`)].join('\n');
}

/** One operator action's answers: accepted / refused / none. */
function operatorCount(e: Evidence, op: 'cancel' | 'resume' | 'retry'): string {
  const records = e.operations.filter((o) => o.op === op);
  const n = (outcome: string) => records.filter((o) => o.outcome === outcome).length;
  return `${op} ${n('accepted')} / ${n('refused')} / ${n('failed')}`;
}

/** The violations, grouped by check, at most `limit` shown. */
export function violationList(violations: Violation[], limit = 60): string {
  const lines = violations.slice(0, limit).map((v) => `  [${v.check}]${v.runId ? ` ${v.runId}:` : ''} ${v.message}`);
  if (violations.length > limit) lines.push(`  … and ${violations.length - limit} more`);
  return lines.join('\n');
}
