import { lazy, Suspense, useState } from 'react';
import { ACTIVITY_RANGES, type ActivityRange, useActivity } from '../../api/activity';
import { isApiError } from '../../api/client';
import { ErrorBox } from '../../components/error-box';
import { Panel } from '../../components/panel';
import segmented from '../../components/segmented.module.css';

// recharts loads after the figures above it: the overview's tiles do not wait for it.
const ActivityCharts = lazy(() => import('./activity-charts'));

const RANGE_LABELS: Record<ActivityRange, string> = { '1h': 'Last hour', '24h': 'Last day' };

/** Runs started, completed, failed and parked over the last hour or day, each bar a link to its runs. */
export function ActivityPanel() {
  const [range, setRange] = useState<ActivityRange>('1h');
  const activity = useActivity(range);
  const toggle = (
    <div className={segmented.group} role="group" aria-label="Range">
      {ACTIVITY_RANGES.map((id) => (
        <button
          key={id}
          type="button"
          className={segmented.option}
          aria-pressed={id === range}
          onClick={() => setRange(id)}
          data-testid={`activity-range-${id}`}
        >
          {RANGE_LABELS[id]}
        </button>
      ))}
    </div>
  );
  return (
    <Panel title="Activity" aside={toggle} testId="activity">
      {activity.data ? (
        <Suspense fallback={<p className="muted">Loading the charts…</p>}>
          <ActivityCharts activity={activity.data} />
        </Suspense>
      ) : activity.isError ? (
        isApiError(activity.error) && activity.error.status === 404 ? (
          <p className="muted" data-testid="activity-unavailable">
            This server does not report activity yet (GET /api/activity).
          </p>
        ) : (
          <ErrorBox error={activity.error} />
        )
      ) : (
        <p className="muted">Loading…</p>
      )}
      {activity.data && activity.isError && <ErrorBox error={activity.error} />}
    </Panel>
  );
}
