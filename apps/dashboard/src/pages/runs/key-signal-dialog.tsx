import { BULK_LIMIT } from '../../api/bulk';
import { useRunsPreview } from '../../api/runs';
import type { BulkFilter, BusinessKeys } from '../../api/types';
import { ErrorBox } from '../../components/error-box';
import { RunLink } from '../../components/run-link';
import { StatusBadge } from '../../components/status-badge';
import { plural } from '../../lib/format';
import { keyTerms } from '../../lib/run-search';
import { BulkSignalDialog } from './bulk-signal-dialog';
import styles from './runs.module.css';

/** The list's largest page: the count is exact up to it. */
const PREVIEW_LIMIT = 500;
const PREVIEW_ROWS = 10;

interface KeySignalDialogProps {
  /** The list's filter, keys included: the delivery goes to the same filter, matched again on the server. */
  filter: BulkFilter & { keys: BusinessKeys };
  /** The search's run id prefix, which a delivery by filter cannot take. */
  idPrefix: string;
  defaultName: string;
  busy: boolean;
  error: unknown;
  onConfirm: (name: string, payload: unknown) => void;
  onClose: () => void;
}

/** The bulk signal to every run with the searched keys: the matched runs first, then the signal. */
export function KeySignalDialog({ filter, idPrefix, ...dialog }: KeySignalDialogProps) {
  const preview = useRunsPreview({ ...filter, limit: PREVIEW_LIMIT });
  const runs = preview.data?.runs ?? [];
  const more = Boolean(preview.data?.nextCursor);
  return (
    <BulkSignalDialog
      {...dialog}
      title={`Signal every run with ${keyTerms(filter.keys)}`}
      confirmLabel={`Deliver to ${more ? `${PREVIEW_LIMIT}+ runs` : plural(runs.length, 'run')}`}
      ready={runs.length > 0}
    >
      <ErrorBox error={preview.error} testId="preview-error" />
      {preview.isPending ? (
        <p className="muted">Finding the runs…</p>
      ) : (
        preview.data && (
          <div className={styles.preview} data-testid="signal-preview">
            <p data-testid="preview-count">
              {runs.length === 0
                ? 'No run matches: there is nothing to signal.'
                : more
                  ? `More than ${PREVIEW_LIMIT} runs match; one delivery reaches at most ${BULK_LIMIT.toLocaleString('en')}, the newest.`
                  : `${plural(runs.length, 'run')} ${runs.length === 1 ? 'matches' : 'match'} the list's filters, on any page:`}
              {idPrefix && ' The run id prefix does not narrow a delivery by key.'}
            </p>
            {runs.length > 0 && (
              <table>
                <tbody>
                  {runs.slice(0, PREVIEW_ROWS).map((run) => (
                    <tr key={run.runId} data-testid="preview-run" data-run-id={run.runId}>
                      <td>
                        <RunLink runId={run.runId} />
                      </td>
                      <td className={styles.workflow}>{run.workflow}</td>
                      <td>
                        <StatusBadge status={run.status} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {runs.length > PREVIEW_ROWS && <p className="muted">and {more ? 'more' : plural(runs.length - PREVIEW_ROWS, 'other')}.</p>}
          </div>
        )
      )}
    </BulkSignalDialog>
  );
}
