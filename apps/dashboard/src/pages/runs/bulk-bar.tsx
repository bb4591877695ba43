import { useState } from 'react';
import { type BulkAction, useBulkAction } from '../../api/bulk';
import type { Run } from '../../api/types';
import { Button } from '../../components/button';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { awaitedNames } from '../../lib/awaited-names';
import { serverNow } from '../../lib/clock';
import { plural } from '../../lib/format';
import { keyTerms, parseRunSearch } from '../../lib/run-search';
import { BulkCancelDialog } from './bulk-cancel-dialog';
import type { BulkReport } from './bulk-results';
import { BulkSignalDialog } from './bulk-signal-dialog';
import { type BulkScope, useBulkTargets } from './bulk-targets';
import { formatTotal, type RunTotal } from './run-total';
import styles from './runs.module.css';
import { type RunsView, searchedKeys, toBulkFilter } from './runs-view';
import type { Selection } from './use-selection';

interface BulkBarProps {
  selection: Selection;
  /** The rows on screen: the ticked runs' details, and the signal the runs await. */
  runs: Run[];
  view: RunsView;
  /** The list's total, to name how many runs the filters match. */
  total: RunTotal | undefined;
  onReport: (report: BulkReport) => void;
}

type Action = 'signal' | 'resume' | 'cancel';
/** An open dialog: its action and the runs it is for, fixed when it opened (a preset range too). */
interface Open {
  action: Action;
  scope: BulkScope;
  /** The dialog opened from "signal every run with these keys". */
  byKeys?: boolean;
}

/**
 * Bulk actions over the ticked runs or over every run the filters match (at most 1,000), and, when
 * the search names business keys, a signal to every run with them; each goes through a dialog that
 * lists the runs and their count before anything is sent.
 */
export function BulkBar({ selection, runs, view, total, onReport }: BulkBarProps) {
  const [byFilter, setByFilter] = useState(false);
  const [open, setOpen] = useState<Open | null>(null);
  const bulk = useBulkAction();
  const count = selection.ids.size;
  const keys = searchedKeys(view);

  const scopeNow = (filter: boolean): BulkScope =>
    filter
      ? { kind: 'filter', filter: toBulkFilter(view, serverNow()), idPrefix: parseRunSearch(view.q).idPrefix }
      : { kind: 'selection', runIds: [...selection.ids], rows: runs.filter((run) => selection.ids.has(run.runId)) };
  const start = (action: Action, byKeys = false) => {
    bulk.reset();
    setOpen({ action, scope: scopeNow(byFilter || byKeys), byKeys });
  };
  const send = (request: BulkAction, label: string, expected: number | undefined) =>
    bulk.mutate(request, {
      onSuccess: ({ results }) => {
        onReport({ label, results, expected });
        selection.clear();
        setOpen(null);
      },
    });
  const disabled = !byFilter && !count;

  return (
    <div className={styles.bulkBar}>
      <fieldset className={styles.scope}>
        <legend>Act on</legend>
        <label>
          <input
            type="radio"
            name="bulk-scope"
            checked={!byFilter}
            onChange={() => setByFilter(false)}
            data-testid="bulk-scope-selection"
          />
          {count ? `the ${count} selected` : 'the runs you tick'}
        </label>
        <label>
          <input type="radio" name="bulk-scope" checked={byFilter} onChange={() => setByFilter(true)} data-testid="bulk-scope-filter" />
          every run matching the filters{total && ` (${formatTotal(total)})`}
        </label>
      </fieldset>
      <Button small disabled={disabled} onClick={() => start('signal')} data-testid="bulk-signal">
        Deliver signal…
      </Button>
      <Button small disabled={disabled} onClick={() => start('resume')} data-testid="bulk-resume">
        Resume…
      </Button>
      <Button small variant="danger" disabled={disabled} onClick={() => start('cancel')} data-testid="bulk-cancel">
        Cancel…
      </Button>
      {count > 0 && !byFilter && (
        <Button small variant="ghost" onClick={selection.clear}>
          Clear selection
        </Button>
      )}
      {keys && (
        <Button small className={styles.keyAction} onClick={() => start('signal', true)} data-testid="bulk-signal-keys">
          Signal every run with {Object.keys(keys).length === 1 ? 'this key' : 'these keys'}…
        </Button>
      )}

      {open && (
        <BulkDialog
          open={open}
          defaultSignal={commonAwaitedSignal(open.scope.kind === 'selection' ? open.scope.rows : runs) ?? view.signal}
          keysLabel={keys && keyTerms(keys)}
          busy={bulk.isPending}
          error={bulk.error}
          send={send}
          onClose={() => setOpen(null)}
        />
      )}
    </div>
  );
}

interface BulkDialogProps {
  open: Open;
  defaultSignal: string;
  keysLabel: string | undefined;
  busy: boolean;
  error: unknown;
  send: (request: BulkAction, label: string, expected: number | undefined) => void;
  onClose: () => void;
}

/** The dialog of one bulk action: the runs it is for (bulk-targets.tsx), then what the action needs. */
function BulkDialog({ open, defaultSignal, keysLabel, busy, error, send, onClose }: BulkDialogProps) {
  const targets = useBulkTargets(open.scope);
  const { count, target } = targets;
  const byFilter = open.scope.kind === 'filter';
  const which = byFilter ? 'every run matching the filters' : plural(count ?? 0, 'run');
  const many = count === undefined ? '' : ` ${plural(count, 'run')}`;
  const scopeLabel = byFilter ? ' (by filter)' : '';
  const common = { busy, error, onClose };

  if (open.action === 'signal') {
    const title = open.byKeys && keysLabel ? `Signal every run with ${keysLabel}` : `Deliver a signal to ${which}`;
    return (
      <BulkSignalDialog
        {...common}
        ready={targets.ready}
        title={title}
        confirmLabel={`Deliver to${many || ' the runs'}`}
        defaultName={defaultSignal}
        onConfirm={(name, payload) =>
          send(
            { action: 'signal', ...target, name, payload },
            open.byKeys && keysLabel ? `Signal "${name}" to every run with ${keysLabel}` : `Signal "${name}"${scopeLabel}`,
            count,
          )
        }
      >
        {targets.view}
      </BulkSignalDialog>
    );
  }
  if (open.action === 'resume') {
    return (
      <ConfirmDialog
        {...common}
        title={`Resume ${which}?`}
        confirmLabel={`Resume${many}`}
        canConfirm={targets.ready}
        onConfirm={() => send({ action: 'resume', ...target }, `Resume${scopeLabel}`, count)}
      >
        {targets.view}
        <p>
          Sleeps and retry backoffs end now; runs waiting for a signal, a message or a child are re-invoked and park again if nothing came.
        </p>
      </ConfirmDialog>
    );
  }
  return (
    <BulkCancelDialog
      {...common}
      ready={targets.ready}
      title={`Cancel ${which}?`}
      confirmLabel={`Cancel${many}`}
      onConfirm={(reason) => send({ action: 'cancel', ...target, reason }, `Cancel${scopeLabel}`, count)}
    >
      {targets.view}
    </BulkCancelDialog>
  );
}

/** The one signal name every one of these runs waits for (by `waitForSignal` or a select's arm), if there is one. */
function commonAwaitedSignal(runs: Run[]): string | undefined {
  const [first, ...rest] = runs.map((run) => awaitedNames(run.waiting, 'signal'));
  const common = (first ?? []).filter((name) => rest.every((names) => names.includes(name)));
  return common.length === 1 ? common[0] : undefined;
}
