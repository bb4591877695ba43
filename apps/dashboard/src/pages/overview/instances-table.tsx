import type { Instance } from '../../api/types';
import { JsonBlock } from '../../components/json-block';
import { TimeText } from '../../components/time-text';
import styles from './overview.module.css';

/** The live app instances: who holds leases, who sweeps, whose heartbeat is late. */
export function InstancesTable({ instances, now }: { instances: Instance[]; now: number }) {
  if (instances.length === 0) {
    return <p className={styles.empty}>No instance has a heartbeat: no worker is running, so nothing executes.</p>;
  }
  return (
    <table data-testid="instances">
      <thead>
        <tr>
          <th>Instance</th>
          <th>State</th>
          <th>Heartbeat</th>
          <th>Leases</th>
          <th>Last sweep</th>
          <th>Started</th>
          <th>Detail</th>
        </tr>
      </thead>
      <tbody>
        {instances.map((instance) => (
          <tr key={instance.id}>
            <td className="mono">{instance.id}</td>
            <td>
              <span className={instance.alive ? styles.alive : styles.dead}>{instance.alive ? 'alive' : 'gone'}</span>
            </td>
            <td>
              <TimeText iso={instance.heartbeatAt} now={now} />
            </td>
            <td>{instance.leases}</td>
            <td>
              <TimeText iso={instance.lastSweepAt} now={now} />
            </td>
            <td>
              <TimeText iso={instance.startedAt} now={now} />
            </td>
            <td>
              {instance.detail === undefined || instance.detail === null ? (
                <span className="muted">—</span>
              ) : (
                <details>
                  <summary>show</summary>
                  <JsonBlock value={instance.detail} compact />
                </details>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
