import type { ReactNode } from 'react';
import styles from './notice.module.css';

/** A whole-area message: loading, empty, not found, or an error with what to do about it. */
export function Notice({ title, tone = 'plain', children }: { title: string; tone?: 'plain' | 'error'; children?: ReactNode }) {
  return (
    <div className={tone === 'error' ? `${styles.notice} ${styles.error}` : styles.notice} role={tone === 'error' ? 'alert' : 'status'}>
      <h2>{title}</h2>
      {children && <div className={styles.body}>{children}</div>}
    </div>
  );
}
