import { checkChannels } from './checks/channels';
import type { Check, CheckResult } from './checks/check';
import { checkChildren } from './checks/children';
import type { Evidence, Violation } from './checks/data';
import { checkEffects } from './checks/effects';
import { checkFencing } from './checks/fencing';
import { checkMinimums } from './checks/minimums';
import { checkOperator } from './checks/operator';
import { checkQueues } from './checks/queues';
import { checkRecovery } from './checks/recovery';
import { checkRetention } from './checks/retention';
import { checkSignals } from './checks/signals';
import { checkStuck } from './checks/stuck';
import { checkTerminal } from './checks/terminal';
import { checkTimers } from './checks/timers';
import { checkTransactions } from './checks/transactions';
import { checkWakes } from './checks/wakes';

/** Every promise the harness holds the library to, by name (docs/reliability.md links each to its file). */
export const CHECKS = {
  terminal: checkTerminal,
  effects: checkEffects,
  fencing: checkFencing,
  signals: checkSignals,
  channels: checkChannels,
  children: checkChildren,
  timers: checkTimers,
  stuck: checkStuck,
  recovery: checkRecovery,
  wakes: checkWakes,
  operator: checkOperator,
  transactions: checkTransactions,
  retention: checkRetention,
  queues: checkQueues,
} satisfies Record<string, Check>;

export type CheckName = keyof typeof CHECKS | 'minimums';

export interface Verdict {
  results: Record<CheckName, CheckResult>;
  violations: Violation[];
}

/** Every check, then the minimums (which read the others' counts): a session that did too little fails too. */
export function check(evidence: Evidence): Verdict {
  const checked = Object.fromEntries(Object.entries(CHECKS).map(([name, run]) => [name, run(evidence)])) as Record<
    keyof typeof CHECKS,
    CheckResult
  >;
  const results = { ...checked, minimums: checkMinimums(evidence, checked) };
  return { results, violations: Object.values(results).flatMap((r) => r.violations) };
}
