import { OverviewPage } from '../pages/overview/overview-page';
import { RunDetailPage } from '../pages/run-detail/run-detail-page';
import { RunsPage } from '../pages/runs/runs-page';
import { ScheduleDetailPage } from '../pages/schedules/schedule-detail-page';
import { SchedulesPage } from '../pages/schedules/schedules-page';
import { QueuesPage } from '../pages/queues/queues-page';
import { WorkflowsPage } from '../pages/workflows/workflows-page';
import { Notice } from '../components/notice';
import { matchRoute, useHashLocation } from './router';

export function Routes() {
  const location = useHashLocation();
  const route = matchRoute(location.path);
  switch (route.page) {
    case 'overview':
      return <OverviewPage />;
    case 'runs':
      return <RunsPage params={location.params} />;
    case 'run':
      // Keyed by id: forms and toggles of one run never leak into the next.
      return <RunDetailPage key={route.runId} runId={route.runId} params={location.params} />;
    case 'workflows':
      return <WorkflowsPage />;
    case 'schedules':
      return <SchedulesPage />;
    case 'schedule':
      return <ScheduleDetailPage key={route.name} name={route.name} />;
    case 'queues':
      return <QueuesPage />;
    case 'not-found':
      return (
        <Notice title="Nothing here" heading="h1">
          This address matches no page. Pick one from the menu.
        </Notice>
      );
  }
}
