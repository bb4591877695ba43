import type { ChildRun } from '../../../api/types';
import { RunLink } from '../../../components/run-link';
import { StatusBadge } from '../../../components/status-badge';
import styles from '../run-detail.module.css';

export function ChildrenTab({ runs }: { runs: ChildRun[] }) {
  if (runs.length === 0) return <p className="muted">This run has started no child workflow.</p>;
  return (
    <div className={styles.tableBox}>
      <table data-testid="children">
        <thead>
          <tr>
            <th>Child run</th>
            <th>Workflow</th>
            <th>Status</th>
            <th>Started by step</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((child) => (
            <tr key={child.runId} data-testid="child-row" data-run-id={child.runId}>
              <td>
                <RunLink runId={child.runId} copy />
                {child.detached && (
                  <>
                    {' '}
                    <span
                      className={styles.detached}
                      title="Started with { detached: true }: it keeps neither this run's deadline nor its cancel."
                      data-testid="child-detached"
                    >
                      detached
                    </span>
                  </>
                )}
              </td>
              <td>{child.workflow}</td>
              <td>
                <StatusBadge status={child.status} />
              </td>
              <td className="mono">
                {child.step ?? <span className="muted">—</span>}
                {child.reusedFrom && (
                  <>
                    {' '}
                    <span className="muted" data-testid="child-reused">
                      reused from <RunLink runId={child.reusedFrom} />
                    </span>
                  </>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
