import { useQueries } from '@tanstack/react-query';
import { type CSSProperties, type ReactNode, useCallback, useRef, useState } from 'react';
import { useLiveRefresh } from '../../../api/live';
import { runQueryOptions } from '../../../api/runs';
import type { ChildRun, RunDetail } from '../../../api/types';
import { RunLink } from '../../../components/run-link';
import { StatusBadge } from '../../../components/status-badge';
import { TimeText } from '../../../components/time-text';
import { serverNow } from '../../../lib/clock';
import { formatDuration, plural } from '../../../lib/format';
import { formatTimeOfDay, formatTimestamp, formatUtc, timeTitle } from '../../../lib/time';
import { axisTicks, buildLane, packRows, type TimelineLane } from '../../../lib/timeline';
import styles from './timeline.module.css';

/** Children drawn as lanes of their own (each is one more request); the rest are counted. */
export const MAX_CHILD_LANES = 20;

/**
 * The run over time: its steps as bars from start to end (failed ones marked), the time it waited as
 * gaps saying what for, the signals and messages it received as marks, and under it a lane per child
 * (the first 20, each from its own detail). Every instant on hover in the operator's zone and in UTC.
 */
export function TimelineTab({ detail }: { detail: RunDetail }) {
  const drawn = detail.children.slice(0, MAX_CHILD_LANES);
  // Polled only while live updates are down, as the run's own page: the feed refreshes a child's detail when it changes.
  const { refetchInterval, refetchOnWindowFocus } = useLiveRefresh();
  const childDetails = useQueries({
    queries: drawn.map((child) => ({ ...runQueryOptions(child.runId, refetchInterval), refetchOnWindowFocus })),
  });
  const now = serverNow();
  const lane = buildLane(detail, now);
  const childLanes = drawn.map((child, index) => {
    const data = childDetails[index]?.data;
    return { child, lane: data ? buildLane(data, now) : undefined, grandchildren: data?.children.length ?? 0 };
  });
  const all = [lane, ...childLanes.flatMap((c) => (c.lane ? [c.lane] : []))];
  const start = Math.min(...all.map((l) => l.start));
  const end = Math.max(...all.map((l) => l.end), start + 1);
  const scale = { start, span: end - start };
  const [axisRef, axisWidth] = useWidth();
  const { ticks, unit } = axisTicks(start, end, axisWidth);
  const more = detail.children.length - drawn.length;

  return (
    <div className={styles.timeline} data-testid="timeline">
      <p className={styles.summary}>
        From <TimeText iso={new Date(start).toISOString()} mode="timestamp" /> to{' '}
        <TimeText iso={new Date(end).toISOString()} mode="timestamp" />
        {lane.status === 'running' || lane.status === 'waiting' || lane.status === 'pending' ? ' (now)' : ''}, {formatDuration(end - start)}
        .
        {detail.historyMore && (
          <span data-testid="timeline-history-cut">
            {' '}
            Its waits come from its newest {detail.history.length.toLocaleString()} events: waits before{' '}
            <TimeText iso={detail.history[0].at} mode="timestamp" /> are not drawn.
          </span>
        )}
      </p>
      <Legend />
      <div className={styles.grid}>
        <div className={styles.axisLabel} aria-hidden="true" />
        <div className={styles.axis} ref={axisRef} data-testid="timeline-axis">
          {ticks.map((at) => {
            const iso = new Date(at).toISOString();
            return (
              <span key={at} className={styles.tick} style={{ left: percent(at, scale) }}>
                <TimeText iso={iso}>{formatTimeOfDay(iso, unit)}</TimeText>
              </span>
            );
          })}
        </div>
        <LaneRow lane={lane} scale={scale} depth={0} label={<span className={styles.laneTitle}>this run</span>} />
        {childLanes.map(({ child, lane: childLane, grandchildren }) => (
          <ChildLane key={child.runId} child={child} lane={childLane} grandchildren={grandchildren} scale={scale} />
        ))}
      </div>
      {more > 0 && (
        <p className="muted" data-testid="timeline-more-children">
          {plural(more, 'more child')} not drawn: the first {MAX_CHILD_LANES} are. The Children tab lists them all.
        </p>
      )}
    </div>
  );
}

/** An element's width, followed as it changes: the axis takes as many ticks as fit. */
function useWidth(): [(element: HTMLElement | null) => void, number] {
  const [width, setWidth] = useState(480);
  const observer = useRef<ResizeObserver | null>(null);
  const ref = useCallback((element: HTMLElement | null) => {
    observer.current?.disconnect();
    observer.current = null;
    if (!element) return;
    observer.current = new ResizeObserver(([entry]) => setWidth(entry.contentRect.width));
    observer.current.observe(element);
  }, []);
  return [ref, width];
}

interface Scale {
  start: number;
  span: number;
}

const percent = (at: number, { start, span }: Scale) => `${((at - start) / span) * 100}%`;
const width = (from: number, to: number, { span }: Scale) => `${(Math.max(0, to - from) / span) * 100}%`;

function ChildLane({ child, lane, grandchildren, scale }: { child: ChildRun; lane?: TimelineLane; grandchildren: number; scale: Scale }) {
  const label = (
    <>
      <span className={styles.laneTitle}>child {child.step ?? ''}</span>
      <RunLink runId={child.runId} />
      {grandchildren > 0 && <span className={styles.laneNote}>{plural(grandchildren, 'child')} of its own, on its page</span>}
    </>
  );
  if (!lane) {
    return (
      <div className={styles.lane} data-testid="timeline-child-lane" data-run-id={child.runId} data-depth={1}>
        <div className={`${styles.laneLabel} ${styles.nested}`}>{label}</div>
        <div className={styles.loading}>loading…</div>
      </div>
    );
  }
  return <LaneRow lane={lane} scale={scale} depth={1} label={label} />;
}

const ROW_PX = 22;

function LaneRow({ lane, scale, depth, label }: { lane: TimelineLane; scale: Scale; depth: 0 | 1; label: ReactNode }) {
  // An instant is drawn at least 3 px wide; at ~800 px of track that is 0.4% of the span.
  const rows = packRows(lane.bars, scale.span * 0.004);
  const rowCount = Math.max(1, ...rows.map((row) => row + 1));
  const trackStyle: CSSProperties = { height: `${(rowCount + 1) * ROW_PX + 10}px` };
  return (
    <div
      className={styles.lane}
      data-testid={depth === 0 ? 'timeline-lane' : 'timeline-child-lane'}
      data-run-id={lane.runId}
      data-depth={depth}
    >
      <div className={depth ? `${styles.laneLabel} ${styles.nested}` : styles.laneLabel}>
        {label}
        <span className={styles.laneMeta}>
          <span className="muted">{lane.workflow}</span> <StatusBadge status={lane.status} testId="timeline-status" />
        </span>
      </div>
      <ul className={styles.track} style={trackStyle} aria-label={`Timeline of run ${lane.runId}`}>
        {lane.marks.map((mark, index) => (
          <li
            key={`m${index}`}
            className={`${styles.mark} ${mark.type === 'signal' ? styles.signal : styles.message}`}
            style={{ left: percent(mark.at, scale) }}
            title={timeTitle(new Date(mark.at).toISOString(), `${mark.label} delivered`)}
            data-testid="timeline-mark"
            data-type={mark.type}
            data-label={mark.label}
          >
            <span className={styles.hidden}>
              {mark.label} at {formatTimestamp(new Date(mark.at).toISOString())}
            </span>
          </li>
        ))}
        {lane.bars.map((bar, index) => {
          const startIso = new Date(bar.start).toISOString();
          const note = `${bar.meaning}${bar.meaning === bar.key ? '' : ` (${bar.key})`}${bar.failed ? ', failed' : ''}${
            bar.instant ? '' : `, ${formatDuration(bar.end - bar.start)}`
          }${bar.error ? `\n${bar.error}` : ''}`;
          const className = [styles.bar, bar.instant ? styles.instant : '', bar.failed ? styles.failed : ''].filter(Boolean).join(' ');
          return (
            <li
              key={`b${index}`}
              className={className}
              style={{ left: percent(bar.start, scale), width: width(bar.start, bar.end, scale), top: `${rows[index] * ROW_PX + 8}px` }}
              title={bar.instant ? timeTitle(startIso, note) : spanTitle(note, bar.start, bar.end)}
              data-testid="timeline-bar"
              data-key={bar.key}
              data-meaning={bar.meaning}
              data-failed={bar.failed || undefined}
              data-instant={bar.instant || undefined}
            >
              <span className={styles.barLabel}>
                {bar.failed && <span className={styles.failMark}>✕ </span>}
                {bar.meaning}
              </span>
            </li>
          );
        })}
        {/* The moment between a start and its first claim is worth a gap only when it lasted (a busy queue, no worker). */}
        {lane.gaps.map((gap, index) =>
          gap.kind === 'pending' && gap.end - gap.start < scale.span / 100 ? null : (
            <li
              key={`g${index}`}
              className={gap.open ? `${styles.gap} ${styles.openGap}` : styles.gap}
              style={{ left: percent(gap.start, scale), width: width(gap.start, gap.end, scale), top: `${rowCount * ROW_PX + 10}px` }}
              title={spanTitle(
                `waiting for ${gap.label}${gap.open ? ' (still waiting)' : ''}, ${formatDuration(gap.end - gap.start)}`,
                gap.start,
                gap.end,
              )}
              data-testid="timeline-gap"
              data-kind={gap.kind}
              data-label={gap.label}
            >
              <span className={styles.gapLabel}>{gap.label}</span>
            </li>
          ),
        )}
      </ul>
    </div>
  );
}

/** The hover of a span: what it is, then its start and end, each in the operator's zone and in UTC. */
function spanTitle(note: string, start: number, end: number): string {
  const [from, to] = [new Date(start).toISOString(), new Date(end).toISOString()];
  return `${note}\nfrom ${formatTimestamp(from)} (${formatUtc(from)} · ${from})\nto ${formatTimestamp(to)} (${formatUtc(to)} · ${to})`;
}

function Legend() {
  return (
    <ul className={styles.legend} aria-label="Legend">
      <li>
        <span className={`${styles.swatch} ${styles.bar}`} /> step
      </li>
      <li>
        <span className={`${styles.swatch} ${styles.bar} ${styles.failed}`} /> failed step
      </li>
      <li>
        <span className={`${styles.swatch} ${styles.bar} ${styles.instant}`} /> checkpoint (an instant: a sleep's wake time, a child's
        start…)
      </li>
      <li>
        <span className={`${styles.swatch} ${styles.gap}`} /> waiting, and for what
      </li>
      <li>
        <span className={`${styles.swatchMark} ${styles.signal}`} /> signal
      </li>
      <li>
        <span className={`${styles.swatchMark} ${styles.message}`} /> channel message
      </li>
    </ul>
  );
}
