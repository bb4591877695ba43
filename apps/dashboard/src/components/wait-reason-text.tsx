import { WAIT_KIND_DECLARATIONS, type WaitReason } from '../api/types';
import { serverNow } from '../lib/clock';
import { elapsed, formatCountdown, formatSpan } from '../lib/format';
import { useNow } from '../lib/use-now';
import { RunLink } from './run-link';
import { TimeText } from './time-text';
import styles from './wait-reason-text.module.css';

/**
 * What a run waits for, in words, from the kind's declaration in the registry of wait kinds:
 * its label, its subject and detail ("signal approval, 3 h, deadline in 21 h", "queue llm (partition), 2 s",
 * "sleep nightly until 14:05", "delayed start, starts in 4 min 12 s"), and its instants; a select
 * lists its arms ("select decision: approved (signal), reminder until 14:05"). Past-due times are
 * marked: a run due but not woken is what an operator looks for.
 */
export function WaitReasonText({ waiting }: { waiting: WaitReason | undefined }) {
  if (!waiting) return <span className="muted">—</span>;
  const now = serverNow();
  const declared = WAIT_KIND_DECLARATIONS[waiting.kind];
  const fields: Partial<Record<string, unknown>> = waiting;
  const subject = declared.subject && fields[declared.subject];
  const detailField: string | undefined = 'detail' in declared ? declared.detail : undefined;
  const detail = detailField && fields[detailField];
  const times: Partial<Record<string, 'until' | 'deadline' | 'starts'>> = declared.times;
  // A countdown to a start says all there is to say: how long it has waited adds nothing.
  const countsDown = Object.values(times).includes('starts');
  return (
    <span title={typeof subject === 'string' ? subject : undefined}>
      {declared.label}
      {typeof subject === 'string' && (
        <>
          {' '}
          {/* A child's id, like any run id, keeps its distinguishing end in sight. */}
          {declared.subject === 'childRunId' ? <RunLink runId={subject} /> : <code>{subject}</code>}
        </>
      )}
      {typeof detail === 'string' && ` (${detail})`}
      {waiting.kind === 'queue' && waiting.position !== undefined && (
        <Place position={waiting.position} inPartition={waiting.positionIn === 'partition'} />
      )}
      {waiting.kind === 'select' && <Arms arms={waiting.arms} now={now} />}
      {waiting.since && !countsDown && `, ${formatSpan(elapsed(waiting.since, now))}`}
      {Object.entries(times).map(([field, role]) => {
        const iso = fields[field];
        if (typeof iso !== 'string') return null;
        if (role === 'starts') return <StartsIn key={field} iso={iso} />;
        return role === 'deadline' ? <Due key={field} iso={iso} now={now} label={field} /> : <Until key={field} iso={iso} now={now} />;
      })}
    </span>
  );
}

/** A select's arms: each by its name, with what it waits on (or its timer's instant). */
function Arms({ arms, now }: { arms: Extract<WaitReason, { kind: 'select' }>['arms']; now: number }) {
  return (
    <span data-testid="select-arms">
      :{' '}
      {arms.map((arm, i) => (
        <span key={arm.arm}>
          {i > 0 && ', '}
          <code>{arm.arm}</code>
          {arm.until ? <Until iso={arm.until} now={now} /> : ` (${arm.kind}${arm.name && arm.name !== arm.arm ? ` ${arm.name}` : ''})`}
        </span>
      ))}
    </span>
  );
}

/** The runs ahead of a queued run the server counts, at most (QueueRepository.position). */
const POSITION_COUNTED = 10_000;

/** A queued run's place (on its own page): ", next in line", ", 3 ahead in its partition", ", 10,000+ ahead". */
function Place({ position, inPartition }: { position: number; inPartition: boolean }) {
  const ahead = Math.min(position - 1, POSITION_COUNTED);
  const where = inPartition ? ' in its partition' : '';
  return (
    <span data-testid="queue-place">
      , {ahead === 0 ? `next${where || ' in line'}` : `${ahead.toLocaleString('en')}${ahead === POSITION_COUNTED ? '+' : ''} ahead${where}`}
    </span>
  );
}

/** ", deadline in 21 h", or red once passed. */
function Due({ iso, now, label }: { iso: string; now: number; label: string }) {
  const ms = elapsed(iso, now);
  if (ms < 0)
    return (
      <>
        , {label} in {formatSpan(ms)}
      </>
    );
  return (
    <span className={styles.late}>
      , {label} passed {formatSpan(ms)} ago
    </span>
  );
}

/** " until 14:05", with " (due 3 min ago)" when it has passed by more than a few seconds. */
function Until({ iso, now }: { iso: string; now: number }) {
  const ms = elapsed(iso, now);
  return (
    <>
      {' '}
      until <TimeText iso={iso} mode="clock" />
      {ms >= 5_000 && <span className={styles.late}> (due {formatSpan(ms)} ago)</span>}
    </>
  );
}

/** ", starts in 4 min 12 s", counted down every second, the instant on hover; marked once overdue. */
function StartsIn({ iso }: { iso: string }) {
  const ms = -elapsed(iso, useNow());
  return (
    <>
      ,{' '}
      <TimeText iso={iso} data-testid="starts-in">
        {ms > 0 ? `starts in ${formatCountdown(ms)}` : 'starting now'}
      </TimeText>
      {ms <= -5_000 && <span className={styles.late}> (due {formatSpan(ms)} ago)</span>}
    </>
  );
}
