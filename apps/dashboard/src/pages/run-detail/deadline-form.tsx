import { type FormEvent, useState } from 'react';
import { useSetDeadline } from '../../api/run-actions';
import type { Run } from '../../api/types';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { TimeText } from '../../components/time-text';
import { serverNow } from '../../lib/clock';
import { fromLocalInput, toLocalInput } from '../../lib/datetime-local';
import styles from './run-detail.module.css';

// From the later of now and the current deadline: extending a passed deadline gives the run time again.
const PRESETS = [
  { id: '15m', span: '15 min', ms: 15 * 60_000 },
  { id: '1h', span: '1 h', ms: 3_600_000 },
  { id: '1d', span: '1 d', ms: 86_400_000 },
] as const;

/**
 * Moves the run's deadline: by a preset, to an instant typed in the operator's zone, or cleared. The
 * server moves the attached children that had inherited it too. An instant already passed stops the
 * run (its awaited call throws DeadlineExceededError), so that one is confirmed first.
 */
export function DeadlineForm({ run }: { run: Run }) {
  const update = useSetDeadline();
  const current = run.deadline ? Date.parse(run.deadline) : undefined;
  // The input follows the stored deadline until the operator types.
  const [typed, setTyped] = useState<string | null>(null);
  const value = typed ?? (current === undefined ? '' : toLocalInput(current));
  const typedAt = typed === null ? undefined : fromLocalInput(typed);
  const [passedAt, setPassedAt] = useState<number | null>(null);

  const apply = (at: number | null) =>
    update.mutate(
      { runId: run.runId, deadline: at === null ? null : new Date(at).toISOString() },
      {
        onSuccess: () => {
          setTyped(null);
          setPassedAt(null);
        },
      },
    );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (typedAt === undefined || update.isPending) return;
    if (typedAt <= serverNow()) setPassedAt(typedAt);
    else apply(typedAt);
  };

  return (
    <div className={styles.actionGroup} data-testid="deadline-form">
      <div className={styles.buttons}>
        {PRESETS.map((preset) => (
          <Button
            key={preset.id}
            small
            disabled={update.isPending}
            title={`Move the deadline ${preset.span} past the later of now and the current deadline.`}
            onClick={() => apply(Math.max(serverNow(), current ?? 0) + preset.ms)}
            data-testid={`deadline-extend-${preset.id}`}
          >
            +{preset.span}
          </Button>
        ))}
        {current !== undefined && (
          <Button
            small
            variant="ghost"
            disabled={update.isPending}
            title="Remove the deadline: the run may take as long as it needs."
            onClick={() => apply(null)}
            data-testid="deadline-clear"
          >
            Clear
          </Button>
        )}
      </div>
      <form className={styles.form} onSubmit={submit}>
        <Field label="Exact instant (your time zone)">
          <input
            type="datetime-local"
            value={value}
            onChange={(e) => {
              update.reset();
              setTyped(e.target.value);
            }}
            data-testid="deadline-input"
          />
        </Field>
        <div className={styles.formFooter}>
          <Button type="submit" disabled={typedAt === undefined || update.isPending} data-testid="deadline-set">
            {update.isPending ? 'Saving…' : 'Set deadline'}
          </Button>
        </div>
      </form>
      {passedAt === null ? (
        <ErrorBox error={update.error} testId="deadline-error" />
      ) : (
        <ConfirmDialog
          title="Set a deadline that has passed?"
          confirmLabel="Set deadline"
          danger
          busy={update.isPending}
          error={update.error}
          onConfirm={() => apply(passedAt)}
          onClose={() => setPassedAt(null)}
        >
          <p>
            <TimeText iso={new Date(passedAt).toISOString()} mode="timestamp" /> has passed, so <span className="mono">{run.runId}</span>{' '}
            stops now. The call it awaits throws DeadlineExceededError; the run is failed when the workflow's grace for cleanup ends, if not
            before. A run that has not begun (queued, or waiting for its start or for a worker) is failed instead of run, at the sweeper's
            next pass: it has nothing to clean up.
          </p>
        </ConfirmDialog>
      )}
    </div>
  );
}
