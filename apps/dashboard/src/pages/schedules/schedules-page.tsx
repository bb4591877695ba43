import { useSchedules } from '../../api/schedules';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { ScheduleCard } from './schedule-card';
import styles from './schedules.module.css';

/** Every schedule of this database, declared by decorators or created through the API. */
export function SchedulesPage() {
  const schedules = useSchedules();

  if (schedules.isPending) return <Notice title="Loading schedules…" />;
  if (!schedules.data) return <ErrorBox error={schedules.error} />;
  const list = schedules.data;

  return (
    <PageLayout title="Schedules" note={`${list.length} declared`}>
      {schedules.isError && <ErrorBox error={schedules.error} />}
      <div className={styles.list}>
        {list.length === 0 && (
          <Notice title="No schedule">
            Declare one on a workflow:{' '}
            <code>
              @Workflow('report', {'{'} schedules: [{'{'} name, cron, timezone {'}'}] {'}'})
            </code>
            , or create one with ScheduleService.
          </Notice>
        )}
        {list.map((schedule) => (
          <ScheduleCard key={schedule.name} schedule={schedule} />
        ))}
      </div>
    </PageLayout>
  );
}
