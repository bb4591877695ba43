import type { HistoryEntry } from '../../../api/types';
import { JsonBlock } from '../../../components/json-block';
import { TimeText } from '../../../components/time-text';
import styles from '../run-detail.module.css';

/** Every recorded event with its actor: who signalled, resumed, cancelled or retried, and when. */
export function HistoryTab({ history }: { history: HistoryEntry[] }) {
  if (history.length === 0) return <p className="muted">No history recorded.</p>;
  return (
    <div className={styles.tableBox}>
      <table data-testid="history">
        <thead>
          <tr>
            <th>At</th>
            <th>Event</th>
            <th>Actor</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {history.map((entry) => (
            <tr key={entry.id} data-testid="history-row">
              <td className={styles.nowrap}>
                <TimeText iso={entry.at} mode="timestamp" />
              </td>
              <td className="mono">{entry.event}</td>
              <td>{entry.actor}</td>
              <td className={styles.payloadCell}>
                {entry.detail === null || entry.detail === undefined ? (
                  <span className="muted">—</span>
                ) : (
                  <JsonBlock value={entry.detail} compact />
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
