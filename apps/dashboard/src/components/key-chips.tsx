import type { BusinessKeys } from '../api/types';
import { keyRunsHref } from '../app/router';
import styles from './key-chips.module.css';

/**
 * A run's business keys as `name: value` chips, each a link to the runs having that key. Sorted by
 * name: the server's order is jsonb's (shortest name first), which means nothing to a reader.
 */
export function KeyChips({ keys, compact = false }: { keys: BusinessKeys; compact?: boolean }) {
  const sorted = Object.entries(keys).sort(([a], [b]) => a.localeCompare(b));
  return (
    <span className={compact ? `${styles.chips} ${styles.compact}` : styles.chips}>
      {sorted.map(([name, value]) => (
        <a
          key={name}
          className={styles.chip}
          href={keyRunsHref(name, value)}
          title={`Runs with ${name}: ${value}`}
          data-testid="key-chip"
          data-key={name}
        >
          <span className={styles.name}>{name}:</span> <span className={styles.value}>{value}</span>
        </a>
      ))}
    </span>
  );
}
