import { useState } from 'react';
import { useShortcut } from '../../app/shortcuts';
import { useCancelRun, useResumeRun, useRetryRun } from '../../api/run-actions';
import type { RunDetail } from '../../api/types';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBox } from '../../components/error-box';
import { cancelReaches, canCancel, canResume, canRetry, retryNeedsDeadline } from '../../lib/run-status';
import { useNow } from '../../lib/use-now';
import { CancelDialog } from './cancel-dialog';
import styles from './run-detail.module.css';

/**
 * The actions that apply to the run as it stands, and only those: resume a waiting run, retry a failed
 * one, cancel (confirmed, with a reason) any run not completed or cancelled, a failed one included
 * (the server's rules, lib/run-status.ts). A completed or cancelled run says it has none.
 */
export function RunActions({ detail }: { detail: RunDetail }) {
  const { run } = detail;
  const resume = useResumeRun();
  const cancel = useCancelRun();
  const retry = useRetryRun();
  const [confirmCancel, setConfirmCancel] = useState(false);
  /** An action asked for by its key: a single character typed by mistake (or by speech input) must not change the run. */
  const [confirmKey, setConfirmKey] = useState<'resume' | 'retry' | null>(null);
  const lastError = resume.error ?? retry.error;
  const busy = resume.isPending || cancel.isPending || retry.isPending;
  // The buttons' own handlers, bound to keys while the action applies (the help overlay lists only those).
  const doResume = () => {
    retry.reset();
    const asItWas = run.updatedAt;
    resume.mutate(run.runId, { onSuccess: () => setResumeAnsweredFor(asItWas) });
  };
  const doRetry = () => {
    resume.reset();
    retry.mutate(run.runId);
  };
  const askCancel = () => {
    cancel.reset();
    setConfirmCancel(true);
  };
  useShortcut({ keys: 'r', label: 'Resume this run (asks first)', group: 'This run' }, () => setConfirmKey('resume'), {
    enabled: !busy && canResume(run.status),
  });
  // Its deadline passed (or passes while the page is open): the server would refuse (409), so the button says to move it first.
  const now = useNow();
  const deadlineFirst = retryNeedsDeadline(run, now);
  const deadlinePassed = run.deadline !== undefined && Date.parse(run.deadline) <= now;
  /** The run as it was when a resume answered (its updatedAt): the answer holds only until the run changes. */
  const [resumeAnsweredFor, setResumeAnsweredFor] = useState<string>();
  useShortcut({ keys: 't', label: 'Retry this run (asks first)', group: 'This run' }, () => setConfirmKey('retry'), {
    enabled: !busy && canRetry(run.status) && !deadlineFirst,
  });
  useShortcut({ keys: 'c', label: 'Cancel this run (asks first)', group: 'This run' }, askCancel, {
    enabled: !busy && canCancel(run.status),
  });

  const [resumable, retriable, cancellable] = [canResume(run.status), canRetry(run.status), canCancel(run.status)];
  if (!resumable && !retriable && !cancellable) {
    return (
      <p className="muted" data-testid="no-actions">
        A {run.status} run has no actions left.
      </p>
    );
  }

  return (
    <div className={styles.actionGroup}>
      <div className={styles.buttons}>
        {resumable && (
          <Button
            disabled={busy}
            title="End the wait now: a sleep or backoff finishes, other waits are re-checked. (key: r)"
            onClick={doResume}
            aria-keyshortcuts="r"
            data-testid="action-resume"
          >
            {resume.isPending ? 'Resuming…' : 'Resume'}
          </Button>
        )}
        {retriable && (
          <Button
            variant="primary"
            disabled={busy || deadlineFirst}
            title={
              deadlineFirst
                ? 'Its deadline has passed: a retried run would meet it at once. Move or clear the deadline first.'
                : 'Run again from its checkpoints; failed steps run again. (key: t)'
            }
            aria-keyshortcuts="t"
            onClick={doRetry}
            data-testid="action-retry"
          >
            {retry.isPending ? 'Retrying…' : 'Retry'}
          </Button>
        )}
        {cancellable && (
          <Button
            variant="danger"
            disabled={busy}
            title={
              run.status === 'failed'
                ? 'Close the failed run for good instead of retrying it, after a confirmation. (key: c)'
                : 'Stop the run for good, after a confirmation. (key: c)'
            }
            aria-keyshortcuts="c"
            onClick={askCancel}
            data-testid="action-cancel"
          >
            Cancel…
          </Button>
        )}
      </div>
      {resumable && resume.data?.resumed === false && resumeAnsweredFor === run.updatedAt && (
        <p className="muted" data-testid="resume-unchanged">
          {deadlinePassed && run.waiting?.kind === 'start'
            ? 'Nothing to end: its deadline passed before it began, so it will not begin; the sweeper fails it.'
            : `Nothing to end: the run is due already${deadlinePassed ? ' (its deadline has passed)' : ''}, and runs as soon as an instance takes it up.`}
        </p>
      )}
      {retriable && deadlineFirst && (
        <p className="muted" data-testid="retry-needs-deadline">
          Its deadline has passed: move or clear it (Deadline, below) to retry it.
        </p>
      )}
      <ErrorBox error={lastError} testId="action-error" />
      {confirmKey && (
        <ConfirmDialog
          title={confirmKey === 'resume' ? 'Resume this run?' : 'Retry this run?'}
          confirmLabel={confirmKey === 'resume' ? 'Resume' : 'Retry'}
          onConfirm={() => {
            (confirmKey === 'resume' ? doResume : doRetry)();
            setConfirmKey(null);
          }}
          onClose={() => setConfirmKey(null)}
        />
      )}
      {confirmCancel && (
        <CancelDialog
          runId={run.runId}
          // As the server's cascade: a fork's reused children are the source's, a detached or failed one is left be.
          childCount={detail.children.filter(cancelReaches).length}
          busy={cancel.isPending}
          error={cancel.error}
          onConfirm={(reason) => cancel.mutate({ runId: run.runId, reason }, { onSuccess: () => setConfirmCancel(false) })}
          onClose={() => setConfirmCancel(false)}
        />
      )}
    </div>
  );
}
