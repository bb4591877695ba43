import type { RunWarning } from '../../api/types';
import { runHref } from '../../app/router';
import { TimeText } from '../../components/time-text';
import styles from './run-detail.module.css';

/**
 * An execution parked without reaching checkpoints an earlier one recorded. The run goes on, so the
 * banner says what to decide: the remedy of docs/guides/versioning.md, "When the journal no longer
 * fits the code".
 */
export function RunWarningBanner({ runId, warning }: { runId: string; warning: RunWarning }) {
  return (
    <div className={styles.warning} role="alert" data-testid="run-warning" data-code={warning.code}>
      <p>
        <strong>The journal no longer fits the code</strong>{' '}
        <span className="muted">
          (found <TimeText iso={warning.at} />)
        </span>
      </p>
      <p data-testid="run-warning-message">{warning.message}</p>
      <p className={styles.warningKeys}>
        Not reached:
        {warning.keys.map((key) => (
          <code key={key} data-testid="run-warning-key">
            {key}
          </code>
        ))}
      </p>
      <p>
        What to do: if a stranded step had side effects that the new code repeats,{' '}
        <a href={runHref(runId, { tab: 'journal' })}>rerun from the right step</a> (a fork) and fix the code (a patch, or the old name
        back); if not, leave it: the run goes on, and its next park that reaches every checkpoint clears this. The versioning guide explains
        both: <cite>When the journal no longer fits the code</cite> in <span className="mono">docs/guides/versioning.md</span>.
      </p>
    </div>
  );
}
