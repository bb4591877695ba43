import type { PendingSignal, ReceivedSignal } from '../../../api/types';
import { JsonBlock } from '../../../components/json-block';
import { Panel } from '../../../components/panel';
import { SchemaView } from '../../../components/schema-view';
import { TimeText } from '../../../components/time-text';
import styles from '../run-detail.module.css';

/** Signals received (first payload wins) and those still expected, the awaited one marked. */
export function SignalsTab({ signals, pending }: { signals: ReceivedSignal[]; pending: PendingSignal[] }) {
  return (
    <div className={styles.stack}>
      <Panel title={`Pending (${pending.length})`} flush>
        {pending.length === 0 ? (
          <p className={styles.empty}>No declared or awaited signal is outstanding.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>State</th>
                <th>Schema</th>
              </tr>
            </thead>
            <tbody>
              {pending.map((signal) => (
                <tr key={signal.name} data-testid="pending-signal" data-name={signal.name}>
                  <td className="mono">{signal.name}</td>
                  <td>
                    {signal.awaited ? (
                      <span className={styles.awaited} data-testid="awaited">
                        awaited
                      </span>
                    ) : (
                      <span className="muted">declared</span>
                    )}
                  </td>
                  <td>
                    <SchemaView schema={signal.jsonSchema} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
      <Panel title={`Received (${signals.length})`} flush>
        {signals.length === 0 ? (
          <p className={styles.empty}>No signal received yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Delivered</th>
                <th>Source</th>
                <th>Payload</th>
              </tr>
            </thead>
            <tbody>
              {signals.map((signal) => (
                <tr key={signal.name} data-testid="received-signal" data-name={signal.name}>
                  <td className="mono">{signal.name}</td>
                  <td className={styles.nowrap}>
                    <TimeText iso={signal.deliveredAt} mode="timestamp" />
                  </td>
                  <td>{signal.source ?? <span className="muted">—</span>}</td>
                  <td className={styles.payloadCell}>
                    <JsonBlock value={signal.payload} compact />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Panel>
    </div>
  );
}
