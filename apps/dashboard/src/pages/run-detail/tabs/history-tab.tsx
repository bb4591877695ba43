import type { DeadlineSetDetail, ForkedDetail, ForkedFromDetail, HistoryEntry } from '../../../api/types';
import { useRunHistory } from '../../../api/run-history';
import { Button } from '../../../components/button';
import { ErrorBox } from '../../../components/error-box';
import { JsonBlock } from '../../../components/json-block';
import { RunLink } from '../../../components/run-link';
import { TimeText } from '../../../components/time-text';
import { plural } from '../../../lib/format';
import styles from '../run-detail.module.css';

/**
 * Every recorded event with its actor: who signalled, resumed, cancelled, retried or forked, and when.
 * The newest 500 come with the run; earlier ones load a page at a time.
 */
export function HistoryTab({ runId, newest, newestMore }: { runId: string; newest: HistoryEntry[]; newestMore: boolean }) {
  const { rows: history, more, loadEarlier, loading, error } = useRunHistory(runId, newest, newestMore);
  if (history.length === 0) return <p className="muted">No history recorded.</p>;
  return (
    <div className={styles.tableBox}>
      {more && (
        <p className={styles.historyMore}>
          Showing the newest {history.length.toLocaleString()} events.{' '}
          <Button small onClick={loadEarlier} disabled={loading} data-testid="history-earlier">
            {loading ? 'Loading…' : 'Load earlier events'}
          </Button>
        </p>
      )}
      <ErrorBox error={error} testId="history-earlier-error" />
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
            <tr key={entry.id} data-testid="history-row" data-event={entry.event}>
              <td className={styles.nowrap}>
                <TimeText iso={entry.at} mode="timestamp" />
              </td>
              <td className="mono">{entry.event}</td>
              <td>{entry.actor}</td>
              <td className={styles.payloadCell}>
                <Detail entry={entry} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Detail({ entry }: { entry: HistoryEntry }) {
  if (entry.event === 'deadline-set') return <DeadlineChange detail={entry.detail as DeadlineSetDetail} />;
  if (entry.event === 'forked') return <Forked detail={entry.detail as ForkedDetail} />;
  if (entry.event === 'forked-from') return <ForkedFrom detail={entry.detail as ForkedFromDetail} />;
  if (entry.detail === null || entry.detail === undefined) return <span className="muted">—</span>;
  return <JsonBlock value={entry.detail} compact />;
}

/** "from 2024-03-03 14:05:00 to 2024-03-03 15:05:00": instants to compare, not JSON to read; a child's row names the run it followed. */
function DeadlineChange({ detail }: { detail: DeadlineSetDetail }) {
  return (
    <span data-testid="deadline-change">
      from <DeadlineAt iso={detail.from} /> to <DeadlineAt iso={detail.to} />
      {detail.inheritedFrom && (
        <>
          , following <RunLink runId={detail.inheritedFrom} />
        </>
      )}
    </span>
  );
}

function DeadlineAt({ iso }: { iso: string | undefined }) {
  return iso ? <TimeText iso={iso} mode="timestamp" /> : <span className="muted">none</span>;
}

/** "as <fork>, from close": the run that went on from this one's step. */
function Forked({ detail }: { detail: ForkedDetail }) {
  return (
    <span data-testid="fork-link">
      as <RunLink runId={detail.fork} />, from <code>{detail.fromStep}</code>
    </span>
  );
}

/** "from <source> at close, signals before: 2 steps, 1 signal and 0 messages copied": what the fork started with. */
function ForkedFrom({ detail }: { detail: ForkedFromDetail }) {
  return (
    <span data-testid="fork-link">
      from <RunLink runId={detail.source} /> at <code>{detail.fromStep}</code>, signals <code>{detail.signals}</code>:{' '}
      {plural(detail.copiedSteps, 'step')}, {plural(detail.copiedSignals, 'signal')} and {plural(detail.copiedMessages, 'message')} copied
      {detail.inputOverridden ? ', with a new input' : ''}
    </span>
  );
}
