import type { JournalStep, Run } from '../../../api/types';
import { JsonBlock } from '../../../components/json-block';
import { Panel } from '../../../components/panel';
import styles from '../run-detail.module.css';
import { ErrorDetails } from '../run-failure';

/**
 * Input, and the outcome: output when completed. An error is shown here when the header does not show
 * it (a failed run's is there): a run waiting out a retry's backoff, say.
 */
export function SummaryTab({ run, steps }: { run: Run; steps: JournalStep[] }) {
  return (
    <div className={styles.stack}>
      <Panel title="Input">
        <JsonBlock value={run.input} />
      </Panel>
      {run.error && run.status !== 'failed' && (
        <Panel title="Error" testId="summary-error">
          <ErrorDetails runId={run.runId} error={run.error} steps={steps} />
        </Panel>
      )}
      {(run.status === 'completed' || run.output !== undefined) && (
        <Panel title="Output">
          <JsonBlock value={run.output} />
        </Panel>
      )}
      {run.waiting && (
        <Panel title="Wait (as the API answers it)">
          <JsonBlock value={run.waiting} compact />
        </Panel>
      )}
    </div>
  );
}
