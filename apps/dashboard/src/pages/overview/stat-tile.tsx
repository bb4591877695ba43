import type { ReactNode } from 'react';
import styles from './overview.module.css';

interface StatTileProps {
  label: ReactNode;
  value: number;
  href: string;
  /** A status or wait kind: colours the tile's edge. */
  tone?: string;
  /** The figure is the server's estimate (a count past 10,000), not an exact count. */
  estimated?: boolean;
  testId?: string;
}

export const ESTIMATE_TITLE = "Past 10,000 runs this figure is the database planner's estimate, not an exact count.";

/** One figure that links to the runs behind it. */
export function StatTile({ label, value, href, tone, estimated, testId }: StatTileProps) {
  return (
    <a href={href} className={`${styles.tile} ${tone ? (styles[`tone-${tone}`] ?? '') : ''}`} data-testid={testId}>
      <span className={styles.tileValue} title={estimated ? ESTIMATE_TITLE : undefined}>
        {estimated && '≈ '}
        {value.toLocaleString()}
      </span>
      <span className={styles.tileLabel}>
        {label}
        {estimated && ' (estimate)'}
      </span>
    </a>
  );
}
