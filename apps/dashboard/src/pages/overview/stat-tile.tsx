import type { ReactNode } from 'react';
import styles from './overview.module.css';

interface StatTileProps {
  label: ReactNode;
  value: number;
  href: string;
  /** A status or wait kind: colours the tile's edge. */
  tone?: string;
  testId?: string;
}

/** One figure that links to the runs behind it. */
export function StatTile({ label, value, href, tone, testId }: StatTileProps) {
  return (
    <a href={href} className={`${styles.tile} ${tone ? (styles[`tone-${tone}`] ?? '') : ''}`} data-testid={testId}>
      <span className={styles.tileValue}>{value.toLocaleString()}</span>
      <span className={styles.tileLabel}>{label}</span>
    </a>
  );
}
