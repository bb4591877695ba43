import type { ErrorInfo, JournalStep } from '../../api/types';
import { runHref } from '../../app/router';
import { StackTrace } from '../../components/stack-trace';
import { StepName } from '../../components/step-name';
import styles from './run-detail.module.css';

/**
 * What a run's error says: its name and message, the step it came out of (as what the key means, the
 * key beside it, a link to the journal) and the stack its code threw, folded.
 */
export function ErrorDetails({ runId, error, steps }: { runId: string; error: ErrorInfo; steps: JournalStep[] }) {
  const kind = error.step === undefined ? undefined : steps.filter((step) => step.key === error.step).pop()?.kind;
  return (
    <>
      <p className={styles.failureMessage}>
        <strong>{error.name}</strong>: {error.message}
      </p>
      {error.step !== undefined && (
        <p className={styles.failureStep} data-testid="failed-step" data-key={error.step}>
          In step <StepName stepKey={error.step} kind={kind} /> <a href={runHref(runId, { tab: 'journal' })}>(journal)</a>
        </p>
      )}
      <StackTrace stack={error.stack} testId="run-stack" />
    </>
  );
}

/** The header's failure block of a failed run. */
export function RunFailure({ runId, error, steps }: { runId: string; error: ErrorInfo; steps: JournalStep[] }) {
  return (
    <div className={styles.failure} role="alert" data-testid="run-failure">
      <ErrorDetails runId={runId} error={error} steps={steps} />
    </div>
  );
}
