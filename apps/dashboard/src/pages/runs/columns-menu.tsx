import type { Run } from '../../api/types';
import styles from './runs.module.css';
import { type Columns, OPTIONAL_COLUMNS } from './use-columns';
import { fromSummaryOption, type Summary, summaryFields, summaryLabel, summaryOption } from './use-summary';

/** A small menu of the runs table's optional columns, each a checkbox, and the summary column's field. */
export function ColumnsMenu({ columns, summary, runs }: { columns: Columns; summary: Summary; runs: Run[] }) {
  const fields = summaryFields(runs, summary.field);
  return (
    <details className={styles.columnsMenu}>
      <summary data-testid="columns-menu">Columns</summary>
      <div className={styles.columnsList}>
        {OPTIONAL_COLUMNS.map(({ id, label }) => (
          <label key={id}>
            <input type="checkbox" checked={columns.shown.has(id)} onChange={() => columns.toggle(id)} data-testid={`column-${id}`} />
            {label}
          </label>
        ))}
        <label className={styles.summaryPicker}>
          Summary
          <select
            value={summary.field ? summaryOption(summary.field) : ''}
            onChange={(e) => summary.choose(fromSummaryOption(e.target.value))}
            title="A field of each run's input, or one of its keys, shown in a column of its own"
            data-testid="summary-field"
          >
            <option value="">none</option>
            {fields.map((field) => (
              <option key={summaryOption(field)} value={summaryOption(field)}>
                {summaryLabel(field)}
              </option>
            ))}
          </select>
        </label>
      </div>
    </details>
  );
}
