import styles from './runs.module.css';
import { type Columns, OPTIONAL_COLUMNS } from './use-columns';

/** A small menu of the runs table's optional columns, each a checkbox. */
export function ColumnsMenu({ columns }: { columns: Columns }) {
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
      </div>
    </details>
  );
}
