import { runHref } from '../app/router';
import styles from './run-link.module.css';

/** A run id as a link: monospace, cut visually to fit, the full id in the tooltip. */
export function RunLink({ runId, full = false }: { runId: string; full?: boolean }) {
  return (
    <a href={runHref(runId)} className={full ? styles.full : styles.link} title={runId}>
      {runId}
    </a>
  );
}
