import { type ReactNode, useState } from 'react';
import { BULK_LIMIT, type BulkTarget } from '../../api/bulk';
import { useRunsPreview } from '../../api/runs';
import type { BulkFilter, Run } from '../../api/types';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { RunLink } from '../../components/run-link';
import { StatusBadge } from '../../components/status-badge';
import { plural } from '../../lib/format';
import { formatTotal } from './run-total';
import styles from './runs.module.css';

/** The runs shown in a bulk dialog, at most; the count says how many in all. */
export const LISTED = 50;

/** Which runs a bulk action is for: the ticked ones (with their rows, as on screen), or every match of a filter. */
export type BulkScope = { kind: 'selection'; runIds: string[]; rows: Run[] } | { kind: 'filter'; filter: BulkFilter; idPrefix: string };

export interface BulkTargets {
  /** The operator may confirm: the runs are known and, for a filter, within the limit and their count confirmed. */
  ready: boolean;
  /** What the request names: the ids, or the filter (matched again by the server when it acts). */
  target: BulkTarget;
  /** How many runs the dialog showed, once known. */
  count: number | undefined;
  /** The list, the count and, for a filter, the confirmation: the top of the dialog. */
  view: ReactNode;
}

/**
 * What a bulk dialog acts on, shown before anything is sent. Ticked runs: their ids (the first 50) and
 * how many. A filter: its total from GET /runs with the same filter, read once when the dialog opens,
 * and its first 50 runs; the operator types the count to confirm it, and more than 1,000 matches (the
 * most one bulk action reaches) are refused here, before any request.
 */
export function useBulkTargets(scope: BulkScope): BulkTargets {
  const filter = scope.kind === 'filter' ? scope.filter : undefined;
  const preview = useRunsPreview({ ...filter, limit: LISTED }, Boolean(filter));
  const [typed, setTyped] = useState('');

  if (scope.kind === 'selection') {
    const byId = new Map(scope.rows.map((run) => [run.runId, run]));
    return {
      ready: scope.runIds.length > 0,
      target: { runIds: scope.runIds },
      count: scope.runIds.length,
      view: (
        <div className={styles.targets} data-testid="bulk-targets">
          <p data-testid="bulk-target-count">
            {plural(scope.runIds.length, 'run')} ticked{scope.runIds.length > LISTED ? `; the first ${LISTED}:` : ':'}
          </p>
          <TargetList runs={scope.runIds.slice(0, LISTED).map((runId) => byId.get(runId) ?? { runId })} />
          {scope.runIds.length > LISTED && <p className="muted">and {plural(scope.runIds.length - LISTED, 'other')}.</p>}
        </div>
      ),
    };
  }

  const total = preview.data?.total ?? (preview.data && { count: preview.data.runs.length, estimated: false });
  const runs = preview.data?.runs ?? [];
  const count = total?.count;
  const tooMany = Boolean(total && (total.estimated || total.count > BULK_LIMIT));
  const confirmed = count !== undefined && typed.replace(/[\s,.'’_]/g, '') === String(count);
  return {
    ready: !tooMany && confirmed && count! > 0,
    target: { filter: scope.filter },
    count,
    view: (
      <div className={styles.targets} data-testid="bulk-targets">
        <ErrorBox error={preview.error} testId="preview-error" />
        {preview.isPending ? (
          <p className="muted">Counting the runs…</p>
        ) : !total ? null : total.count === 0 ? (
          <p data-testid="bulk-target-count">No run matches the filters: there is nothing to act on.</p>
        ) : tooMany ? (
          <p className={styles.refusal} data-testid="bulk-too-many">
            {formatTotal(total)} match the filters; one bulk action reaches at most {BULK_LIMIT.toLocaleString('en')}. Narrow the filters (a
            time range, a status, a workflow) and try again.
          </p>
        ) : (
          <>
            <p data-testid="bulk-target-count">
              {formatTotal(total)} {total.count === 1 ? 'matches' : 'match'} the filters, on every page
              {total.count > LISTED ? `; the first ${LISTED}:` : ':'}
            </p>
            <TargetList runs={runs} />
            {total.count > runs.length && <p className="muted">and {plural(total.count - runs.length, 'other')}.</p>}
            {scope.idPrefix && <p className="muted">The run id prefix of the search does not narrow an action by filter.</p>}
            <Field
              label={`Type ${total.count.toLocaleString('en')} to confirm the count`}
              hint="The server matches the filters again when you confirm; a run that changed meanwhile may be in or out."
            >
              <input
                value={typed}
                onChange={(e) => setTyped(e.target.value)}
                inputMode="numeric"
                autoComplete="off"
                className={styles.countInput}
                data-testid="confirm-count"
              />
            </Field>
          </>
        )}
      </div>
    ),
  };
}

/** The runs, each with its id as elsewhere (a link, its end kept), its workflow and status when known. */
function TargetList({ runs }: { runs: Array<Pick<Run, 'runId'> & Partial<Run>> }) {
  return (
    <div className={styles.targetsScroll}>
      <table>
        <tbody>
          {runs.map((run) => (
            <tr key={run.runId} data-testid="bulk-target" data-run-id={run.runId}>
              <td>
                <RunLink runId={run.runId} />
              </td>
              <td className={styles.workflow}>{run.workflow}</td>
              <td>{run.status && <StatusBadge status={run.status} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
