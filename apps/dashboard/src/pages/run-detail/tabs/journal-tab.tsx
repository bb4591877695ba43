import { memo, useState } from 'react';
import type { JournalStep, RunDetail } from '../../../api/types';
import { useCanMutate } from '../../../app/session-context';
import { Button } from '../../../components/button';
import { JsonBlock } from '../../../components/json-block';
import { StackTrace } from '../../../components/stack-trace';
import { StepName } from '../../../components/step-name';
import { TimeText } from '../../../components/time-text';
import { formatDuration } from '../../../lib/format';
import { ForkDialog } from '../fork-dialog';
import styles from '../run-detail.module.css';

/**
 * The memoized steps, oldest first, as a list. Each key reads as what it means (the key itself beside
 * it); results can be large: shown on demand; an error shows its stack, folded. Each checkpoint offers
 * a fork from it, whatever the run's status, unless the dashboard is read-only.
 */
export function JournalTab({ detail }: { detail: RunDetail }) {
  const canFork = useCanMutate();
  const [forkFrom, setForkFrom] = useState<JournalStep | null>(null);
  if (detail.steps.length === 0) return <p className="muted">No step has completed yet.</p>;
  return (
    <>
      <ol className={styles.timeline} data-testid="journal">
        {detail.steps.map((step, index) => (
          <StepItem key={`${step.key}#${index}`} step={step} onFork={canFork ? setForkFrom : undefined} />
        ))}
      </ol>
      {forkFrom && <ForkDialog detail={detail} step={forkFrom} onClose={() => setForkFrom(null)} />}
    </>
  );
}

/** What `ctx.patched(id)` answered for this run, journaled once: the path it keeps whatever code runs it later. */
function PatchDecision({ patched }: { patched: boolean }) {
  return (
    <span
      className={styles.tag}
      title={
        patched
          ? 'patched() answered true: this run takes the new code path.'
          : 'patched() answered false: this run had gone past the point under older code, and keeps the old path.'
      }
      data-testid="patch-decision"
    >
      {patched ? 'new path' : 'old path'}
    </span>
  );
}

// A row renders again only when its step changed: the detail is polled, its unchanged steps keep their identity.
const StepItem = memo(function StepItem({ step, onFork }: { step: JournalStep; onFork?: (step: JournalStep) => void }) {
  const [open, setOpen] = useState(false);
  const hasResult = step.result !== undefined;
  return (
    <li
      className={step.outcome === 'error' ? `${styles.step} ${styles.stepError}` : styles.step}
      data-testid="journal-step"
      data-key={step.key}
    >
      <div className={styles.stepLine}>
        <span className={styles.stepKey}>
          <StepName stepKey={step.key} kind={step.kind} />
        </span>
        <span className={styles.tag}>{step.kind}</span>
        <span className={step.outcome === 'ok' ? styles.ok : styles.bad}>{step.outcome}</span>
        {step.kind === 'patch' && typeof step.result === 'boolean' && <PatchDecision patched={step.result} />}
        <span className="muted">{formatDuration(step.durationMs)}</span>
        <span className={styles.stepTime}>
          <TimeText iso={step.finishedAt} mode="timestamp" />
        </span>
        {hasResult && (
          <Button small variant="ghost" onClick={() => setOpen(!open)} aria-expanded={open} data-testid="step-toggle">
            {open ? 'hide' : 'show'}
          </Button>
        )}
        {onFork && (
          <Button
            small
            variant="ghost"
            title="Fork this run: this checkpoint and every later one run again, the earlier ones are kept."
            onClick={() => onFork(step)}
            data-testid="step-fork"
          >
            Rerun from here
          </Button>
        )}
      </div>
      {step.error && (
        <div className={styles.stepErrorText} data-testid="step-error">
          {step.error.name}: {step.error.message}
          <StackTrace stack={step.error.stack} testId="step-stack" />
        </div>
      )}
      {open && hasResult && <JsonBlock value={step.result} compact />}
    </li>
  );
});
