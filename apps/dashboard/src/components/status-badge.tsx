import type { RunStatus } from '../api/types';
import styles from './status-badge.module.css';

/** A run status, coloured; `testId` is `status` in lists and `run-status` in a run's header. */
export function StatusBadge({ status, testId = 'status' }: { status: RunStatus; testId?: string }) {
  return (
    <span className={`${styles.badge} ${styles[status] ?? ''}`} data-testid={testId} data-status={status}>
      {status}
    </span>
  );
}
