import { useState } from 'react';
import { type BulkAction, useBulkAction } from '../../api/bulk';
import type { Run } from '../../api/types';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { BulkCancelDialog } from './bulk-cancel-dialog';
import type { BulkReport } from './bulk-results';
import { BulkSignalDialog } from './bulk-signal-dialog';
import styles from './runs.module.css';
import type { Selection } from './use-selection';

interface BulkBarProps {
  selection: Selection;
  /** The rows on screen, to suggest the signal most of the selection awaits. */
  runs: Run[];
  signalFilter: string;
  onReport: (report: BulkReport) => void;
}

type Dialog = 'signal' | 'resume' | 'cancel' | null;

/** Bulk actions over the ticked runs; each goes through a dialog before anything is sent. */
export function BulkBar({ selection, runs, signalFilter, onReport }: BulkBarProps) {
  const [dialog, setDialog] = useState<Dialog>(null);
  const bulk = useBulkAction();
  const runIds = [...selection.ids];
  const count = runIds.length;

  const open = (next: Dialog) => {
    bulk.reset();
    setDialog(next);
  };
  const send = (request: BulkAction, label: string) =>
    bulk.mutate(request, {
      onSuccess: ({ results }) => {
        onReport({ label, results });
        selection.clear();
        setDialog(null);
      },
    });

  return (
    <div className={styles.bulkBar}>
      <span className={styles.selectedCount}>{count ? `${count} selected` : 'Tick runs to act on several at once'}</span>
      <Button small disabled={!count} onClick={() => open('signal')} data-testid="bulk-signal">
        Deliver signal…
      </Button>
      <Button small disabled={!count} onClick={() => open('resume')} data-testid="bulk-resume">
        Resume
      </Button>
      <Button small variant="danger" disabled={!count} onClick={() => open('cancel')} data-testid="bulk-cancel">
        Cancel…
      </Button>
      {count > 0 && (
        <Button small variant="ghost" onClick={selection.clear}>
          Clear selection
        </Button>
      )}

      {dialog === 'signal' && (
        <BulkSignalDialog
          count={count}
          defaultName={commonAwaitedSignal(runs, selection) ?? signalFilter}
          busy={bulk.isPending}
          error={bulk.error}
          onConfirm={(name, payload) => send({ action: 'signal', runIds, name, payload }, `Signal "${name}"`)}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'resume' && (
        <ConfirmDialog
          title={`Resume ${count} run${count === 1 ? '' : 's'}?`}
          confirmLabel={`Resume ${count}`}
          busy={bulk.isPending}
          error={bulk.error}
          onConfirm={() => send({ action: 'resume', runIds }, 'Resume')}
          onClose={() => setDialog(null)}
        >
          <p>
            Sleeps and retry backoffs end now; runs waiting for a signal, a message or a child are re-invoked and park again if nothing
            came.
          </p>
        </ConfirmDialog>
      )}
      {dialog === 'cancel' && (
        <BulkCancelDialog
          count={count}
          busy={bulk.isPending}
          error={bulk.error}
          onConfirm={(reason) => send({ action: 'cancel', runIds, reason }, 'Cancel')}
          onClose={() => setDialog(null)}
        />
      )}
    </div>
  );
}

/** The signal name every selected, visible run waits for, if they agree. */
function commonAwaitedSignal(runs: Run[], selection: Selection): string | undefined {
  const names = new Set(
    runs.filter((run) => selection.ids.has(run.runId)).map((run) => (run.waiting?.kind === 'signal' ? run.waiting.name : '')),
  );
  const [only] = names;
  return names.size === 1 && only ? only : undefined;
}
