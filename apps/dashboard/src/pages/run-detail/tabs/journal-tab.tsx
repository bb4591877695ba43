import { useState } from 'react';
import type { JournalStep } from '../../../api/types';
import { Button } from '../../../components/button';
import { JsonBlock } from '../../../components/json-block';
import { TimeText } from '../../../components/time-text';
import { formatDuration } from '../../../lib/format';
import styles from '../run-detail.module.css';

/** The memoized steps, oldest first, as a timeline. Results can be large: shown on demand. */
export function JournalTab({ steps }: { steps: JournalStep[] }) {
  if (steps.length === 0) return <p className="muted">No step has completed yet.</p>;
  return (
    <ol className={styles.timeline} data-testid="journal">
      {steps.map((step, index) => (
        <StepItem key={`${step.key}#${index}`} step={step} />
      ))}
    </ol>
  );
}

function StepItem({ step }: { step: JournalStep }) {
  const [open, setOpen] = useState(false);
  const hasResult = step.result !== undefined;
  return (
    <li className={step.outcome === 'error' ? `${styles.step} ${styles.stepError}` : styles.step} data-testid="journal-step">
      <div className={styles.stepLine}>
        <span className={styles.stepKey}>{step.key}</span>
        <span className={styles.tag}>{step.kind}</span>
        <span className={step.outcome === 'ok' ? styles.ok : styles.bad}>{step.outcome}</span>
        <span className="muted">{formatDuration(step.durationMs)}</span>
        <span className={styles.stepTime}>
          <TimeText iso={step.finishedAt} mode="timestamp" />
        </span>
        {hasResult && (
          <Button small variant="ghost" onClick={() => setOpen(!open)} aria-expanded={open} data-testid="step-toggle">
            {open ? 'hide' : 'show'}
          </Button>
        )}
      </div>
      {step.error && (
        <div className={styles.stepErrorText}>
          {step.error.name}: {step.error.message}
        </div>
      )}
      {open && hasResult && <JsonBlock value={step.result} compact />}
    </li>
  );
}
