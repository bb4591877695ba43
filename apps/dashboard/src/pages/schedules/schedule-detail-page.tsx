import { isApiError } from '../../api/client';
import { useSchedule } from '../../api/schedules';
import type { Run } from '../../api/types';
import { scheduleRunsHref } from '../../app/router';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { Panel } from '../../components/panel';
import { RunLink } from '../../components/run-link';
import { StatusBadge } from '../../components/status-badge';
import { TimeText } from '../../components/time-text';
import { ScheduleCard } from './schedule-card';
import styles from './schedules.module.css';
import { SkippedSlots } from './skipped-slots';

/** One schedule: the card of the list, its recent runs and the slots it skipped. */
export function ScheduleDetailPage({ name }: { name: string }) {
  const query = useSchedule(name);

  if (query.isPending) return <Notice title="Loading schedule…" />;
  if (!query.data) {
    if (isApiError(query.error) && query.error.status === 404) {
      return (
        <Notice title="Schedule not found">
          <p>
            No schedule is named <span className="mono">{name}</span>.
          </p>
          <a href="#/schedules">Back to the schedules</a>
        </Notice>
      );
    }
    return <ErrorBox error={query.error} />;
  }

  const { schedule, runs, skipped } = query.data;
  return (
    <PageLayout title={schedule.name} parent={{ href: '#/schedules', label: 'Schedules' }}>
      {query.isError && <ErrorBox error={query.error} />}
      <ScheduleCard schedule={schedule} />
      <Panel title="Recent runs" aside={<a href={scheduleRunsHref(schedule.name)}>all runs of this schedule</a>} flush>
        <RecentRuns runs={runs} />
      </Panel>
      <Panel title={`Skipped slots (${schedule.skippedCount})`} flush testId="skipped-panel">
        <SkippedSlots slots={skipped} />
      </Panel>
    </PageLayout>
  );
}

/** The slot a schedule's run was started for: its input's `scheduledAt` (a trigger's: the instant of the trigger). */
function slotOf(run: Run): string | undefined {
  const scheduledAt = (run.input as { scheduledAt?: unknown } | null)?.scheduledAt;
  return typeof scheduledAt === 'string' ? scheduledAt : undefined;
}

function RecentRuns({ runs }: { runs: Run[] }) {
  if (runs.length === 0) return <p className={`muted ${styles.empty}`}>No run yet.</p>;
  return (
    <table data-testid="schedule-runs">
      <thead>
        <tr>
          <th>Run</th>
          <th>Status</th>
          <th>Slot</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.runId} data-testid="schedule-run" data-run-id={run.runId}>
            <td>
              <RunLink runId={run.runId} />
            </td>
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td className={styles.nowrap}>
              <TimeText iso={slotOf(run)} mode="timestamp" data-testid="schedule-run-slot" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
