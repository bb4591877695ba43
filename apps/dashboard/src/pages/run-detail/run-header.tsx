import type { ReactNode } from 'react';
import type { Run, RunDetail } from '../../api/types';
import { useWorkflow } from '../../api/workflows';
import { hrefFor } from '../../app/router';
import { CopyButton } from '../../components/copy-button';
import { DeadlineCountdown } from '../../components/deadline-countdown';
import { KeyChips } from '../../components/key-chips';
import { RunLink } from '../../components/run-link';
import { StatusBadge } from '../../components/status-badge';
import { TimeText } from '../../components/time-text';
import { WaitReasonText } from '../../components/wait-reason-text';
import { formatExactSpan } from '../../lib/format';
import { deadlineCounts } from '../../lib/run-status';
import { useNow } from '../../lib/use-now';
import styles from './run-detail.module.css';
import { RunFailure } from './run-failure';
import { RunWarningBanner } from './run-warning';

/**
 * Past its deadline, a run that has begun and not ended has its workflow's grace to clean up (the awaited
 * call threw DeadlineExceededError), and is failed at the grace's end whatever it does. A run that has
 * not begun has nothing to clean up: the sweeper fails it, and its wait reason says so. The grace is the
 * workflow's as this instance registers it.
 */
function GraceEnd({ run, deadline }: { run: Run; deadline: string }) {
  const workflow = useWorkflow(run.workflow);
  const now = useNow();
  const at = Date.parse(deadline);
  const underWay = run.beganAt !== undefined && !run.finishedAt && run.status !== 'failed';
  if (!workflow || !underWay || now < at) return null;
  const end = at + workflow.deadlineGraceMs;
  const iso = new Date(end).toISOString();
  return (
    <span className="muted" data-testid="deadline-grace" data-iso={iso}>
      {' '}
      ·{' '}
      {now < end ? (
        <>
          failed at <TimeText iso={iso} mode="timestamp" /> unless it ends first ({formatExactSpan(workflow.deadlineGraceMs)} of grace to
          clean up)
        </>
      ) : (
        <>
          its grace ended at <TimeText iso={iso} mode="timestamp" />: failed when an instance executes it next
        </>
      )}
    </span>
  );
}

/** One fact of the header: its label over what it says. */
function Fact({ label, testId, className, children }: { label: string; testId?: string; className?: string; children: ReactNode }) {
  return (
    <div data-testid={testId}>
      <dt>{label}</dt>
      <dd className={className}>{children}</dd>
    </div>
  );
}

/** Who the run is, where it came from, where it stands and why it waits. */
export function RunHeader({ detail }: { detail: RunDetail }) {
  const { run, parent, forks } = detail;
  const waiting = run.waiting;
  // 2.4.0 reads v2.4.0; a commit hash or a name shows as it is.
  const version = run.appVersion && (/^\d/.test(run.appVersion) ? `v${run.appVersion}` : run.appVersion);
  return (
    <header className={styles.header}>
      <div className={styles.titleRow}>
        <span className={styles.kicker}>Run</span>
        <h1 className={styles.runId} data-testid="run-id">
          {run.runId}
        </h1>
        <CopyButton text={run.runId} label="Copy run id" />
        <StatusBadge status={run.status} testId="run-status" />
        {version && (
          <span className={styles.version} title="The application's version when this run was created" data-testid="run-app-version">
            {version}
          </span>
        )}
      </div>
      <dl className={styles.facts}>
        <Fact label="Workflow">
          <a href={hrefFor('/runs', { status: 'all', workflow: run.workflow })}>{run.workflow}</a>
        </Fact>
        <Fact label="Attempt">
          {run.attempt}
          {run.maxAttempts !== undefined && ` of ${run.maxAttempts}`}
        </Fact>
        <Fact label="Created">
          <TimeText iso={run.createdAt} mode="timestamp" />
        </Fact>
        <Fact label="Updated">
          <TimeText iso={run.updatedAt} />
        </Fact>
        {run.beganAt && (
          <Fact label="Began" testId="run-began">
            <TimeText iso={run.beganAt} mode="timestamp" />
          </Fact>
        )}
        {run.finishedAt && (
          <Fact label="Finished">
            <TimeText iso={run.finishedAt} mode="timestamp" />
          </Fact>
        )}
        {run.deadline && (
          <div>
            <dt>Deadline</dt>
            <dd className={styles.deadline} data-testid="run-deadline" data-iso={run.deadline}>
              <TimeText iso={run.deadline} mode="timestamp" />
              {/* A completed or cancelled run is past caring: no countdown. */}
              {deadlineCounts(run.status) && <DeadlineCountdown iso={run.deadline} />}
              <GraceEnd run={run} deadline={run.deadline} />
            </dd>
          </div>
        )}
        {run.queue && (
          <Fact label="Queue" testId="run-queue">
            <a href="#/queues">{run.queue}</a>
            {run.partitionKey !== undefined && (
              <span className="muted" data-testid="run-partition">
                {' '}
                · partition <span className="mono">{run.partitionKey}</span>
              </span>
            )}
            {run.priority !== undefined && (
              <span className="muted" title="0 is first, 1000 last; 100 by default" data-testid="run-priority">
                {' '}
                · priority {run.priority}
              </span>
            )}
          </Fact>
        )}
        {run.debounce && (
          <Fact label="Debounce" testId="run-debounce">
            key <span className="mono">{run.debounce.key}</span>
            {run.debounce.startsBy && (
              <span className="muted" title="Later starts with the key put it off, but never past this (its maxDelay).">
                {' '}
                · starts by <TimeText iso={run.debounce.startsBy} mode="timestamp" /> at the latest
              </span>
            )}
          </Fact>
        )}
        {run.forkedFrom && (
          <Fact label="Forked from" testId="run-forked-from">
            <RunLink runId={run.forkedFrom} copy />
          </Fact>
        )}
        {forks.length > 0 && (
          <Fact label="Forks" testId="run-forks" className={styles.forks}>
            {forks.map((fork) => (
              <RunLink key={fork} runId={fork} />
            ))}
            <a href={hrefFor('/runs', { status: 'all', forkedFrom: run.runId })} data-testid="run-forks-list">
              list them
            </a>
          </Fact>
        )}
        {run.keys && (
          <Fact label="Keys" testId="run-keys">
            <KeyChips keys={run.keys} />
          </Fact>
        )}
        {(parent || run.parentRunId) && (
          <Fact label="Parent" className={styles.parent}>
            <RunLink runId={parent?.runId ?? run.parentRunId!} copy />
            {parent && (
              <>
                <span className="muted">{parent.workflow}</span>
                <StatusBadge status={parent.status} testId="parent-status" />
              </>
            )}
            {run.detached && (
              <span
                className={styles.detached}
                title="Started with { detached: true }: it keeps neither its parent's deadline nor its parent's cancel."
                data-testid="detached"
              >
                detached
              </span>
            )}
          </Fact>
        )}
      </dl>
      {waiting && (
        <div className={styles.waiting} data-testid="wait-reason">
          <span className={styles.waitingLabel}>Waiting for</span>
          <WaitReasonText waiting={waiting} />
          {waiting.kind === 'retry' && (
            <span className={styles.waitError}>
              after {waiting.error.name}: {waiting.error.message}
            </span>
          )}
        </div>
      )}
      {run.warning && <RunWarningBanner runId={run.runId} warning={run.warning} />}
      {run.error && run.status === 'failed' && <RunFailure runId={run.runId} error={run.error} steps={detail.steps} />}
    </header>
  );
}
