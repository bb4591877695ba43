import type { Run } from '../../../api/types';
import { JsonBlock } from '../../../components/json-block';
import { Panel } from '../../../components/panel';
import styles from '../run-detail.module.css';

/** Input, and the outcome: output when completed, error when failed. */
export function SummaryTab({ run }: { run: Run }) {
  return (
    <div className={styles.stack}>
      <Panel title="Input">
        <JsonBlock value={run.input} />
      </Panel>
      {run.error && (
        <Panel title="Error">
          <JsonBlock value={run.error} />
        </Panel>
      )}
      {(run.status === 'completed' || run.output !== undefined) && (
        <Panel title="Output">
          <JsonBlock value={run.output} />
        </Panel>
      )}
      {run.waiting && (
        <Panel title="Wait (as stored)">
          <JsonBlock value={run.waiting} compact />
        </Panel>
      )}
    </div>
  );
}
