import { useStats } from '../../api/stats';
import { RUN_STATUSES, WAIT_KIND_DECLARATIONS, WAIT_KINDS } from '../../api/types';
import { hrefFor } from '../../app/router';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { Panel } from '../../components/panel';
import { RunLink } from '../../components/run-link';
import { TimeText } from '../../components/time-text';
import { WaitReasonText } from '../../components/wait-reason-text';
import { elapsed, formatSpan } from '../../lib/format';
import { ActivityPanel } from './activity-panel';
import { InstancesTable } from './instances-table';
import { JournalDaysPanel } from './journal-days-panel';
import styles from './overview.module.css';
import { ESTIMATE_TITLE, StatTile } from './stat-tile';

/** The /stats figures at a glance, refreshed every 2 s; every figure links to its runs. */
export function OverviewPage() {
  const stats = useStats();
  if (stats.isPending) return <Notice title="Loading…" />;
  if (stats.isError && !stats.data) return <ErrorBox error={stats.error} />;
  const data = stats.data!;
  // Ages here use the server's own `now` from the same answer: exact, whatever the browser's clock.
  const now = Date.parse(data.now);
  const total = RUN_STATUSES.reduce((sum, status) => sum + (data.byStatus[status] ?? 0), 0);

  return (
    <div className={styles.page}>
      <div className={styles.heading}>
        <h1>Overview</h1>
        <span className="muted">
          {data.estimated.byStatus.length > 0 && '≈ '}
          {total.toLocaleString()} runs · last sweep <TimeText iso={data.lastSweepAt} now={now} />
        </span>
      </div>
      {stats.isError && <ErrorBox error={stats.error} />}

      <section>
        <h2 className={styles.sectionTitle}>Runs by status</h2>
        <div className={styles.tiles}>
          {RUN_STATUSES.map((status) => (
            <StatTile
              key={status}
              label={status}
              value={data.byStatus[status] ?? 0}
              estimated={data.estimated.byStatus.includes(status)}
              tone={status}
              href={hrefFor('/runs', { status })}
              testId={`stat-${status}`}
            />
          ))}
        </div>
      </section>

      <div className={styles.columns}>
        <section>
          <h2 className={styles.sectionTitle}>Waiting, by what they wait for</h2>
          <div className={styles.tiles}>
            {WAIT_KINDS.map((kind) => (
              <StatTile
                key={kind}
                label={WAIT_KIND_DECLARATIONS[kind].label}
                value={data.waitingByKind[kind] ?? 0}
                estimated={data.estimated.waitingByKind.includes(kind)}
                tone="waiting"
                href={hrefFor('/runs', { status: 'waiting', waitingFor: kind })}
                testId={`waiting-${kind}`}
              />
            ))}
          </div>
        </section>

        <Panel title="Oldest waiting run" testId="oldest-waiting">
          {data.oldestWaiting ? (
            <div className={styles.oldest}>
              <RunLink runId={data.oldestWaiting.runId} full />
              <span className="muted">{data.oldestWaiting.workflow}</span>
              <WaitReasonText waiting={data.oldestWaiting.waiting} />
              <span>
                waiting for <strong>{formatSpan(elapsed(data.oldestWaiting.since, now))}</strong>
              </span>
            </div>
          ) : (
            <span className="muted">No run is waiting.</span>
          )}
        </Panel>

        <Panel title="Overdue wakes" testId="overdue">
          <div className={data.overdue.count > 0 ? `${styles.overdue} ${styles.overdueBad}` : styles.overdue}>
            <strong className={styles.overdueCount} title={data.estimated.overdue ? ESTIMATE_TITLE : undefined}>
              {data.estimated.overdue && '≈ '}
              {data.overdue.count.toLocaleString()}
            </strong>
            {data.overdue.count > 0 && data.overdue.oldestDueAt ? (
              <span>
                oldest due <TimeText iso={data.overdue.oldestDueAt} now={now} />
              </span>
            ) : (
              <span className="muted">none late</span>
            )}
          </div>
          <p className={styles.help}>
            Runs due for more than two sweep intervals and not picked up. If this grows, check that an instance with a worker is alive.
          </p>
        </Panel>
      </div>

      <ActivityPanel />

      <Panel title={`Instances (${data.instances.filter((i) => i.alive).length} alive)`} flush>
        <InstancesTable instances={data.instances} now={now} />
      </Panel>

      <JournalDaysPanel />
    </div>
  );
}
