import type { Queue } from '../../api/types';
import { hrefFor } from '../../app/router';
import { Panel } from '../../components/panel';
import { formatExactSpan } from '../../lib/format';
import styles from './queues.module.css';

const CAUSES = [
  ['concurrency', 'for a slot of the queue'],
  ['partition', 'for a slot of their partition'],
  ['rate', 'for the rate window'],
] as const;

/** The pending runs of a queue, in the runs list. */
const pendingHref = (queue: string) => hrefFor('/runs', { waitingFor: 'queue', queue });

/** One queue: its limits, what runs, what waits and why, the deepest partitions, the rate window. */
export function QueueCard({ queue }: { queue: Queue }) {
  const pending = queue.pending.concurrency + queue.pending.partition + queue.pending.rate;
  return (
    <Panel
      testId={`queue-${queue.name}`}
      title={<code>{queue.name}</code>}
      aside={
        <span className="muted">
          {[
            queue.concurrency !== null && `${queue.concurrency} at once`,
            queue.partitionConcurrency !== null && `${queue.partitionConcurrency} per partition`,
            queue.rateLimit && `${queue.rateLimit.limit} per ${formatExactSpan(queue.rateLimit.periodMs)}`,
          ]
            .filter(Boolean)
            .join(' · ') || 'no limit'}
        </span>
      }
    >
      <div className={styles.figures}>
        <div>
          <div className={styles.figure} data-testid="queue-running">
            {queue.running}
            {queue.concurrency !== null && <span className="muted"> / {queue.concurrency}</span>}
          </div>
          <div className="muted">running</div>
        </div>
        <div>
          <a className={styles.figure} href={pendingHref(queue.name)} data-testid="queue-pending">
            {pending}
          </a>
          <div className="muted">pending</div>
        </div>
        {queue.rateWindowUsed !== null && queue.rateLimit && (
          <div>
            <div className={styles.figure} data-testid="queue-rate">
              {queue.rateWindowUsed}
              <span className="muted"> / {queue.rateLimit.limit}</span>
            </div>
            <div className="muted">begun in the last {formatExactSpan(queue.rateLimit.periodMs)}</div>
          </div>
        )}
      </div>
      {pending > 0 && (
        <ul className={styles.causes} data-testid="queue-causes">
          {CAUSES.filter(([cause]) => queue.pending[cause] > 0).map(([cause, words]) => (
            <li key={cause}>
              {queue.pending[cause]} waiting {words} (<code>{cause}</code>)
            </li>
          ))}
        </ul>
      )}
      {queue.partitions.length > 0 && (
        <table className={styles.partitions} data-testid="queue-partitions">
          <thead>
            <tr>
              <th>partition</th>
              <th>running</th>
              <th>pending</th>
            </tr>
          </thead>
          <tbody>
            {queue.partitions.map((p) => (
              <tr key={p.key}>
                <td>
                  <code>{p.key}</code>
                </td>
                <td>{p.running}</td>
                <td>{p.pending}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Panel>
  );
}
