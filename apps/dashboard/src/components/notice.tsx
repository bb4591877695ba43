import type { ReactNode } from 'react';
import styles from './notice.module.css';

/** A whole-area message: loading, empty, not found, or an error with what to do about it. */
export function Notice({
  title,
  tone = 'plain',
  heading: Heading = 'h2',
  children,
}: {
  title: string;
  tone?: 'plain' | 'error';
  /** `h1` where the notice is the whole page (no page matches the address). */
  heading?: 'h1' | 'h2';
  children?: ReactNode;
}) {
  return (
    <div className={tone === 'error' ? `${styles.notice} ${styles.error}` : styles.notice} role={tone === 'error' ? 'alert' : 'status'}>
      <Heading className={styles.title}>{title}</Heading>
      {children && <div className={styles.body}>{children}</div>}
    </div>
  );
}
