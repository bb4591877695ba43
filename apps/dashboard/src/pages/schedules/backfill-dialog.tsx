import { useState } from 'react';
import { useBackfillSchedule, usePreviewBackfill } from '../../api/schedules';
import type { BackfillResult, Schedule } from '../../api/types';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { TimeText } from '../../components/time-text';
import { serverNow } from '../../lib/clock';
import { fromLocalInput, toLocalInput } from '../../lib/datetime-local';
import { plural } from '../../lib/format';
import styles from './schedules.module.css';

interface BackfillDialogProps {
  schedule: Schedule;
  onDone: (result: BackfillResult) => void;
  onClose: () => void;
}

/**
 * A range in the operator's zone, previewed by the server (a dry run counts the runs it would start),
 * then confirmed. The confirm button stays off until the preview is of the range on screen.
 */
export function BackfillDialog({ schedule, onDone, onClose }: BackfillDialogProps) {
  const [from, setFrom] = useState(() => toLocalInput(serverNow() - 24 * 3_600_000));
  const [to, setTo] = useState(() => toLocalInput(serverNow()));
  const preview = usePreviewBackfill();
  const backfill = useBackfillSchedule();
  const range = toRange(from, to);
  const previewed =
    preview.data && preview.variables && range && preview.variables.from === range.from && preview.variables.to === range.to;
  const count = previewed ? preview.data!.started : 0;

  const edit = (apply: () => void) => {
    preview.reset();
    backfill.reset();
    apply();
  };

  return (
    <ConfirmDialog
      title={`Backfill ${schedule.name}?`}
      confirmLabel={previewed ? `Start ${plural(count, 'run')}` : 'Preview first'}
      canConfirm={Boolean(previewed) && count > 0}
      busy={backfill.isPending}
      error={backfill.error}
      onConfirm={() => range && backfill.mutate({ name: schedule.name, ...range }, { onSuccess: onDone })}
      onClose={onClose}
    >
      <p>
        Starts a run of <span className="mono">{schedule.workflow}</span> for each slot of the range, as if it had fired then (times in your
        zone).
      </p>
      <div className={styles.range}>
        <Field label="From">
          <input type="datetime-local" value={from} onChange={(e) => edit(() => setFrom(e.target.value))} data-testid="backfill-from" />
        </Field>
        <Field label="To">
          <input type="datetime-local" value={to} onChange={(e) => edit(() => setTo(e.target.value))} data-testid="backfill-to" />
        </Field>
        <Button
          small
          disabled={!range || preview.isPending}
          onClick={() => range && preview.mutate({ name: schedule.name, ...range })}
          data-testid="backfill-preview"
        >
          {preview.isPending ? 'Counting…' : 'Preview'}
        </Button>
      </div>
      <ErrorBox
        issues={range ? [] : [{ path: '', message: 'Give a start no later than the end.' }]}
        error={preview.error}
        testId="backfill-error"
      />
      {previewed && (
        <p
          className={styles.preview}
          data-testid="backfill-preview-count"
          data-started={preview.data!.started}
          data-skipped={preview.data!.skipped}
        >
          This starts {plural(preview.data!.started, 'run')}
          {preview.data!.skipped > 0 && ` and skips ${plural(preview.data!.skipped, 'slot')}`}
          {preview.data!.first && preview.data!.last && (
            // The slots the range holds, in the operator's zone: a range off by a zone or a day shows here.
            <span data-testid="backfill-preview-slots">
              {preview.data!.slots === 1 ? ': the slot ' : ': slots '}
              <TimeText iso={preview.data!.first} mode="timestamp" />
              {preview.data!.slots > 1 && (
                <>
                  {' to '}
                  <TimeText iso={preview.data!.last} mode="timestamp" />
                </>
              )}
            </span>
          )}
          .
        </p>
      )}
    </ConfirmDialog>
  );
}

/** The inputs as UTC instants; undefined unless both are set and the start comes first. */
function toRange(from: string, to: string): { from: string; to: string } | undefined {
  const start = fromLocalInput(from);
  const end = fromLocalInput(to);
  if (start === undefined || end === undefined || start > end) return undefined;
  return { from: new Date(start).toISOString(), to: new Date(end).toISOString() };
}
