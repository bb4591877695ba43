import { useEffect, useRef } from 'react';
import type { Run, RunSort } from '../../api/types';
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
import { type SummaryField, summaryValue } from './use-summary';

/** The order the list is in, and what a click on a sortable header asks for. */
export interface TableSort {
  sort: RunSort;
  order: 'desc' | 'asc';
  onSort: (sort: RunSort) => void;
}

interface RunsTableProps {
  runs: Run[];
  /** Absent in read-only mode: no checkboxes, nothing to act on. */
  selection?: Selection;
  /** The optional columns the operator chose to show. */
  columns: ReadonlySet<OptionalColumn>;
  /** The field shown in the summary column, if the operator picked one. */
  summary: SummaryField | null;
  sort: TableSort;
}

export function RunsTable({ runs, selection, columns, summary, sort }: RunsTableProps) {
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
          {summary && (
            <th
              className={styles.colSummary}
              data-testid="summary-header"
              title={summary.source === 'input' ? "From each run's input" : 'A business key'}
            >
              {summary.name} <span className="muted">{summary.source === 'input' ? 'input' : 'key'}</span>
            </th>
          )}
          <th className={styles.colWorkflow}>Workflow</th>
          {columns.has('keys') && <th className={styles.colKeys}>Keys</th>}
          <th>Status</th>
          <th className={styles.wait}>Waiting for</th>
          <th className={styles.colAttempt}>Attempt</th>
          <SortHeader column="created" label="Created" className={styles.colAge} sort={sort} />
          <SortHeader column="updated" label="Updated" className={styles.colUpdated} sort={sort} />
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
            {summary && <SummaryCell run={run} field={summary} />}
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

/** A column header that sorts the list by its time: newest first on the first click, then the other way. */
function SortHeader({ column, label, className, sort }: { column: RunSort; label: string; className: string; sort: TableSort }) {
  const active = sort.sort === column;
  const next = active && sort.order === 'desc' ? 'oldest' : 'newest';
  return (
    <th className={className} aria-sort={active ? (sort.order === 'desc' ? 'descending' : 'ascending') : undefined}>
      <button
        type="button"
        className={styles.sortButton}
        onClick={() => sort.onSort(column)}
        title={`Sort by ${column === 'created' ? 'creation' : 'last change'}, ${next} first`}
        data-testid={`sort-${column}`}
      >
        {label}
        <span className={active ? styles.sortArrow : `${styles.sortArrow} ${styles.sortIdle}`} aria-hidden="true">
          {active && sort.order === 'asc' ? '↑' : '↓'}
        </span>
      </button>
    </th>
  );
}

function SummaryCell({ run, field }: { run: Run; field: SummaryField }) {
  const value = summaryValue(run, field);
  return (
    <td className={`${styles.summaryCell} ${styles.colSummary}`} title={value} data-testid="summary-cell">
      {value === undefined ? <span className="muted">—</span> : value.slice(0, 200)}
    </td>
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
