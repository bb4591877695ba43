import { useEffect, useRef } from 'react';
import type { Run } from '../../api/types';
import { DeadlineCountdown } from '../../components/deadline-countdown';
import { KeyChips } from '../../components/key-chips';
import { RunLink } from '../../components/run-link';
import { StatusBadge } from '../../components/status-badge';
import { TimeText } from '../../components/time-text';
import { WaitReasonText } from '../../components/wait-reason-text';
import { deadlineCounts } from '../../lib/run-status';
import styles from './runs.module.css';
import type { OptionalColumn } from './use-columns';
import type { Selection } from './use-selection';

interface RunsTableProps {
  runs: Run[];
  /** Absent in read-only mode: no checkboxes, nothing to act on. */
  selection?: Selection;
  /** The optional columns the operator chose to show. */
  columns: ReadonlySet<OptionalColumn>;
}

export function RunsTable({ runs, selection, columns }: RunsTableProps) {
  const ids = runs.map((run) => run.runId);
  const ticked = selection ? ids.filter((id) => selection.ids.has(id)).length : 0;
  return (
    <table className={styles.table} data-testid="runs-table">
      <thead>
        <tr>
          {selection && (
            <th className={styles.check}>
              <SelectAll
                checked={ticked > 0 && ticked === ids.length}
                indeterminate={ticked > 0 && ticked < ids.length}
                disabled={ids.length === 0}
                onChange={(on) => selection.setMany(ids, on)}
              />
            </th>
          )}
          <th>Run</th>
          <th className={styles.colWorkflow}>Workflow</th>
          {columns.has('keys') && <th className={styles.colKeys}>Keys</th>}
          <th>Status</th>
          <th className={styles.wait}>Waiting for</th>
          <th className={styles.colAttempt}>Attempt</th>
          <th className={styles.colAge}>Age</th>
          <th className={styles.colUpdated}>Updated</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr
            key={run.runId}
            data-testid="run-row"
            data-run-id={run.runId}
            className={selection?.ids.has(run.runId) ? styles.selected : undefined}
          >
            {selection && (
              <td className={styles.check}>
                <input
                  type="checkbox"
                  checked={selection.ids.has(run.runId)}
                  onChange={() => selection.toggle(run.runId)}
                  aria-label={`Select run ${run.runId}`}
                  data-testid="select-run"
                />
              </td>
            )}
            <td>
              <RunLink runId={run.runId} copy />
            </td>
            <td className={`${styles.workflow} ${styles.colWorkflow}`}>{run.workflow}</td>
            {columns.has('keys') && (
              <td className={styles.colKeys} data-testid="keys-cell">
                {run.keys ? <KeyChips keys={run.keys} compact /> : <span className="muted">—</span>}
              </td>
            )}
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td className={styles.wait} data-testid="wait-reason">
              {/* First, so a long reason's ellipsis never hides it: which runs race a deadline, at a glance. */}
              {run.deadline && deadlineCounts(run.status) && <DeadlineCountdown iso={run.deadline} compact />}
              {run.waiting ? (
                <WaitReasonText waiting={run.waiting} />
              ) : run.error ? (
                <span className={styles.error} title={run.error.message}>
                  {run.error.name}: {run.error.message}
                </span>
              ) : (
                <span className="muted">—</span>
              )}
            </td>
            <td className={`${styles.num} ${styles.colAttempt}`}>
              {run.attempt}
              {run.maxAttempts !== undefined && <span className="muted"> / {run.maxAttempts}</span>}
            </td>
            <td className={`${styles.nowrap} ${styles.colAge}`}>
              <TimeText iso={run.createdAt} />
            </td>
            <td className={`${styles.nowrap} ${styles.colUpdated}`}>
              <TimeText iso={run.updatedAt} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The header checkbox; `indeterminate` is a DOM property only, hence the ref. */
function SelectAll({
  checked,
  indeterminate,
  disabled,
  onChange,
}: {
  checked: boolean;
  indeterminate: boolean;
  disabled: boolean;
  onChange: (on: boolean) => void;
}) {
  const ref = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.indeterminate = indeterminate;
  }, [indeterminate]);
  return (
    <input
      ref={ref}
      type="checkbox"
      checked={checked}
      disabled={disabled}
      onChange={() => onChange(!checked)}
      aria-label="Select all runs on this page"
      data-testid="select-all"
    />
  );
}
