import { useState } from 'react';
import { useForkRun } from '../../api/run-actions';
import type { JournalStep, RunDetail, SignalPolicy } from '../../api/types';
import { navigate, runHref } from '../../app/router';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Field } from '../../components/field';
import { StepName } from '../../components/step-name';
import { TimeText } from '../../components/time-text';
import { forkPlan } from '../../lib/fork-plan';
import { plural } from '../../lib/format';
import styles from './run-detail.module.css';

/**
 * "Rerun from here": what the fork will run again, keep and copy, computed from the page's own detail
 * under the chosen signal policy; on confirm the fork is created and its page opened.
 */
export function ForkDialog({ detail, step, onClose }: { detail: RunDetail; step: JournalStep; onClose: () => void }) {
  const { run } = detail;
  const fork = useForkRun();
  const [policy, setPolicy] = useState<SignalPolicy>('before');
  const plan = forkPlan(detail, step, policy);

  return (
    <ConfirmDialog
      title={`Rerun from ${step.key}?`}
      confirmLabel="Fork and open"
      busy={fork.isPending}
      error={fork.error}
      onConfirm={() =>
        fork.mutate({ runId: run.runId, fromStep: step.key, signals: policy }, { onSuccess: (result) => navigate(runHref(result.runId)) })
      }
      onClose={onClose}
    >
      <p>
        A new run of <span className="mono">{run.workflow}</span>, with the same input, runs again from <code>{step.key}</code>.{' '}
        <span className="mono">{run.runId}</span> itself is left as it is.
      </p>
      <Field label="Signals and messages to copy">
        <select
          value={policy}
          onChange={(e) => {
            fork.reset();
            setPolicy(e.target.value as SignalPolicy);
          }}
          data-testid="fork-signals"
        >
          <option value="before">Those delivered before this step: the fork waits again for later ones</option>
          <option value="all">All of them</option>
        </select>
      </Field>
      <StepList title="Runs again" steps={plan.again} testId="fork-again" />
      <StepList title="Kept, not run again" steps={plan.kept} empty="Nothing: every checkpoint runs again." testId="fork-kept" />
      {plan.kept.some((kept) => kept.kind === 'child') && (
        <p className="muted">Children started before it are reused, not started again.</p>
      )}
      <section className={styles.forkSection}>
        <h3>Signals ({plan.signals.filter((s) => s.copied).length} copied)</h3>
        {plan.signals.length === 0 ? (
          <p className="muted">No signal was delivered to this run.</p>
        ) : (
          <table className={styles.forkTable}>
            <tbody>
              {plan.signals.map(({ signal, copied }) => (
                <tr key={signal.name} data-testid="fork-signal" data-name={signal.name} data-copied={copied}>
                  <td className="mono">{signal.name}</td>
                  <td className={styles.nowrap}>
                    <TimeText iso={signal.deliveredAt} mode="timestamp" />
                  </td>
                  <td className={copied ? styles.ok : 'muted'}>{copied ? 'copied' : 'not copied'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {plan.messages.total > 0 && (
          <p className="muted" data-testid="fork-messages">
            {plan.messages.copied} of {plural(plan.messages.total, 'channel message')} copied.
          </p>
        )}
      </section>
    </ConfirmDialog>
  );
}

function StepList({ title, steps, empty, testId }: { title: string; steps: JournalStep[]; empty?: string; testId: string }) {
  return (
    <section className={styles.forkSection} data-testid={testId}>
      <h3>
        {title} ({steps.length})
      </h3>
      {steps.length === 0 ? (
        empty && <p className="muted">{empty}</p>
      ) : (
        <ul className={styles.forkSteps}>
          {steps.map((step) => (
            <li key={step.key} data-testid="fork-step" data-key={step.key}>
              <span className={styles.stepKey}>
                <StepName stepKey={step.key} kind={step.kind} />
              </span>{' '}
              <span className={styles.tag}>{step.kind}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
