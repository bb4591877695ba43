import type { Schedule } from '../../api/types';
import { scheduleHref, scheduleRunsHref } from '../../app/router';
import { RunLink } from '../../components/run-link';
import { StatusBadge } from '../../components/status-badge';
import { TimeText } from '../../components/time-text';
import { describeCron } from '../../lib/cron-text';
import { formatExactSpan, plural } from '../../lib/format';
import { FireTimeList } from './fire-time-list';
import { ScheduleActions } from './schedule-actions';
import styles from './schedules.module.css';

/** What each overlap policy does with a slot while the last run is unfinished. */
const OVERLAP_TEXT: Record<Schedule['overlap'], string> = {
  skip: 'A slot while the last run is unfinished is skipped.',
  bufferOne: 'One slot waits for the last run to end, then starts; further slots are skipped.',
  allow: 'Every slot starts its run, beside an unfinished one.',
  cancelOther: 'A slot cancels the unfinished run, then starts its own.',
};

/** A schedule: its cron in words, state, last run, next fire times, and the operator's actions. */
export function ScheduleCard({ schedule }: { schedule: Schedule }) {
  return (
    <article className={styles.card} data-testid="schedule" data-name={schedule.name} data-paused={schedule.paused}>
      <header className={styles.cardHeader}>
        <h2 className={styles.name}>
          <a href={scheduleHref(schedule.name)}>{schedule.name}</a>
        </h2>
        {/* Held (no instance executes its workflow) reads as paused too, but catches its slots up when one does. */}
        <span className={`${styles.flag} ${schedule.paused ? styles.paused : styles.active}`} data-testid="schedule-state">
          {schedule.workflowMissing ? (schedule.operatorPaused ? 'held · paused' : 'held') : schedule.paused ? 'paused' : 'active'}
        </span>
        {schedule.workflowMissing && (
          // The server's flag: no live instance executes the workflow (this one may still register it).
          <span
            className={`${styles.flag} ${styles.missing}`}
            title="No live instance executes this workflow: the schedule is kept and held, its slots starting nothing, until one does; its catch-up policy then decides the slots it missed."
            data-testid="workflow-missing"
          >
            workflow missing
          </span>
        )}
        <span className={styles.spacer} />
        <a href={scheduleRunsHref(schedule.name)} data-testid="schedule-runs-link">
          runs
        </a>
      </header>
      <div className={styles.cardBody}>
        <section>
          <p className={styles.words} data-testid="cron-words">
            {describeCron(schedule.cron, schedule.timezone)}
          </p>
          <dl className={styles.facts}>
            <dt>Cron</dt>
            <dd className="mono">{schedule.cron}</dd>
            <dt>Workflow</dt>
            <dd className="mono">{schedule.workflow}</dd>
            <dt>Overlap</dt>
            <dd title={OVERLAP_TEXT[schedule.overlap]} data-testid="schedule-overlap">
              {schedule.overlap}
            </dd>
            <dt>Catch-up</dt>
            <dd data-testid="schedule-catchup">
              {schedule.catchup === 'latest' ? 'the latest missed slot' : 'every missed slot'} of the last{' '}
              {formatExactSpan(schedule.catchupWindow)}
            </dd>
            {schedule.jitter > 0 && (
              <>
                <dt>Jitter</dt>
                <dd
                  data-testid="schedule-jitter"
                  title="Each slot's run starts up to this much later (stable for the slot), before the next slot."
                >
                  up to {formatExactSpan(schedule.jitter)}
                </dd>
              </>
            )}
            <dt>Source</dt>
            <dd>{schedule.source === 'decorator' ? '@Workflow decorator' : 'created through the API'}</dd>
            <dt>Last run</dt>
            <dd data-testid="last-run">
              {schedule.lastRun ? (
                <>
                  <RunLink runId={schedule.lastRun.runId} />
                  <StatusBadge status={schedule.lastRun.status} />
                  <span className="muted">
                    slot <TimeText iso={schedule.lastRun.scheduledAt} />
                  </span>
                </>
              ) : (
                <span className="muted">none yet</span>
              )}
            </dd>
            <dt>Skipped</dt>
            <dd data-testid="skipped-count">
              {schedule.skippedCount === 0 ? (
                <span className="muted">no slot</span>
              ) : (
                <a href={scheduleHref(schedule.name)}>{plural(schedule.skippedCount, 'slot')}</a>
              )}
            </dd>
          </dl>
        </section>
        <section>
          <h3 className={styles.sectionTitle}>Next fire times (your zone)</h3>
          <FireTimeList isos={schedule.nextFireTimes} timezone={schedule.timezone} />
        </section>
      </div>
      <ScheduleActions schedule={schedule} />
    </article>
  );
}
