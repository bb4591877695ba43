import { useState } from 'react';
import { type BulkAction, useBulkAction } from '../../api/bulk';
import type { Run } from '../../api/types';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { plural } from '../../lib/format';
import { keyTerms, parseRunSearch } from '../../lib/run-search';
import { BulkCancelDialog } from './bulk-cancel-dialog';
import type { BulkReport } from './bulk-results';
import { BulkSignalDialog } from './bulk-signal-dialog';
import { KeySignalDialog } from './key-signal-dialog';
import styles from './runs.module.css';
import { type RunsView, toBulkFilter } from './runs-view';
import type { Selection } from './use-selection';

interface BulkBarProps {
  selection: Selection;
  /** The rows on screen, to suggest the signal the runs await. */
  runs: Run[];
  view: RunsView;
  onReport: (report: BulkReport) => void;
}

type Dialog = 'signal' | 'signal-keys' | 'resume' | 'cancel' | null;

/**
 * Bulk actions over the ticked runs, and, when the search names business keys, a signal to every run
 * with them; each goes through a dialog before anything is sent.
 */
export function BulkBar({ selection, runs, view, onReport }: BulkBarProps) {
  const [dialog, setDialog] = useState<Dialog>(null);
  const bulk = useBulkAction();
  const runIds = [...selection.ids];
  const count = runIds.length;
  const filter = toBulkFilter(view);
  const { keys } = filter;

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
      {keys && (
        <Button small className={styles.keyAction} onClick={() => open('signal-keys')} data-testid="bulk-signal-keys">
          Signal every run with {Object.keys(keys).length === 1 ? 'this key' : 'these keys'}…
        </Button>
      )}

      {dialog === 'signal' && (
        <BulkSignalDialog
          title={`Deliver a signal to ${plural(count, 'run')}`}
          defaultName={commonAwaitedSignal(runs.filter((run) => selection.ids.has(run.runId))) ?? view.signal}
          busy={bulk.isPending}
          error={bulk.error}
          onConfirm={(name, payload) => send({ action: 'signal', runIds, name, payload }, `Signal "${name}"`)}
          onClose={() => setDialog(null)}
        />
      )}
      {dialog === 'signal-keys' && keys && (
        <KeySignalDialog
          filter={{ ...filter, keys }}
          idPrefix={parseRunSearch(view.q).idPrefix}
          defaultName={commonAwaitedSignal(runs) ?? view.signal}
          busy={bulk.isPending}
          error={bulk.error}
          onConfirm={(name, payload) =>
            send({ action: 'signal', filter, name, payload }, `Signal "${name}" to every run with ${keyTerms(keys)}`)
          }
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

/** The signal name every one of these runs waits for, if they agree. */
function commonAwaitedSignal(runs: Run[]): string | undefined {
  const names = new Set(runs.map((run) => (run.waiting?.kind === 'signal' ? run.waiting.name : '')));
  const [only] = names;
  return names.size === 1 && only ? only : undefined;
}
