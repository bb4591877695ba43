import type { ReactNode } from 'react';
import styles from './field.module.css';

/**
 * A label over its control, with an optional hint under it. `as="div"` for a field that holds more than one
 * control (a <label> would pass a click anywhere on it to its first button).
 */
export function Field({
  label,
  hint,
  as: Tag = 'label',
  children,
}: {
  label: ReactNode;
  hint?: ReactNode;
  as?: 'label' | 'div';
  children: ReactNode;
}) {
  return (
    <Tag className={styles.field}>
      <span className={styles.label}>{label}</span>
      {children}
      {hint && <span className={styles.hint}>{hint}</span>}
    </Tag>
  );
}
