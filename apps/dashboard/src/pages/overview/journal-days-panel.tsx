import { useJournalDays } from '../../api/journal';
import type { JournalDay } from '../../api/types';
import { hrefFor } from '../../app/router';
import { ErrorBox } from '../../components/error-box';
import { Panel } from '../../components/panel';
import { formatBytes } from '../../lib/format';
import styles from './overview.module.css';

const DAY_MS = 86_400_000;

/**
 * The journal by day (each day's partitions): its size, the runs of it left, and what retention does
 * with it. A day goes whole once none of its runs is left, so a day kept by a few runs says so and
 * links to them.
 */
export function JournalDaysPanel() {
  const journal = useJournalDays();
  if (journal.isPending) return null;
  if (journal.isError && !journal.data) return <ErrorBox error={journal.error} />;
  const { days, retention, standingBytes } = journal.data!;
  const total = days.reduce((sum, d) => sum + d.bytes, standingBytes);
  return (
    <Panel title="Journal by day" aside={<span className="muted">{formatBytes(total)} in all</span>} testId="journal-days" flush>
      <table>
        <thead>
          <tr>
            <th>Day (UTC)</th>
            <th>Size</th>
            <th>Runs left</th>
            <th>Retention</th>
          </tr>
        </thead>
        <tbody>
          {days.map((day) => (
            <tr key={day.day} data-testid="journal-day" data-day={day.day} data-state={day.state}>
              <td className="mono">{day.legacy ? 'before partitioning' : day.day}</td>
              <td>{formatBytes(day.bytes)}</td>
              <td>
                <RunsLeft day={day} />
              </td>
              <td className={day.state === 'held' ? undefined : 'muted'}>{stateText(day, retention)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className={styles.help}>
        A day&apos;s journal is dropped whole once none of the runs created that day is left; a run still waiting keeps its day.
      </p>
    </Panel>
  );
}

function RunsLeft({ day }: { day: JournalDay }) {
  const count = `${day.runs.atLeast ? '≥ ' : ''}${day.runs.count.toLocaleString()}`;
  if (day.runs.count === 0 || day.legacy) return <span>{count}</span>;
  const from = Date.parse(`${day.day}T00:00:00Z`);
  const range = { status: 'all', createdAfter: new Date(from).toISOString(), createdBefore: new Date(from + DAY_MS).toISOString() };
  return <a href={hrefFor('/runs', range)}>{count}</a>;
}

function stateText(day: JournalDay, retention: boolean): string {
  switch (day.state) {
    case 'ahead':
      return 'made ahead';
    case 'recent':
      return 'kept: too recent to drop';
    case 'held':
      return retention ? 'kept until its runs are gone' : 'kept: retention is off';
    case 'drops':
      return retention ? 'dropped at the next cleanup' : 'kept: retention is off';
  }
}
