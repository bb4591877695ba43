import { pretty } from '../lib/format';
import styles from './json-block.module.css';

/** A payload, pretty-printed as text (never as HTML). `undefined` means "no value", shown as such. */
export function JsonBlock({ value, compact = false }: { value: unknown; compact?: boolean }) {
  if (value === undefined) return <span className="muted">(none)</span>;
  return (
    <pre className={compact ? `${styles.block} ${styles.compact}` : styles.block} data-testid="payload">
      {pretty(value)}
    </pre>
  );
}
