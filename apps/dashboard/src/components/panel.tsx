import type { ReactNode } from 'react';
import styles from './panel.module.css';

interface PanelProps {
  title?: ReactNode;
  /** Right side of the title row: a link, a count, a toggle. */
  aside?: ReactNode;
  children: ReactNode;
  flush?: boolean;
  testId?: string;
}

/** A titled white card. `flush` drops the padding, for tables that run edge to edge. */
export function Panel({ title, aside, children, flush = false, testId }: PanelProps) {
  return (
    <section className={styles.panel} data-testid={testId}>
      {(title || aside) && (
        <header className={styles.header}>
          <h2 className={styles.title}>{title}</h2>
          {aside}
        </header>
      )}
      <div className={flush ? styles.flush : styles.body}>{children}</div>
    </section>
  );
}
