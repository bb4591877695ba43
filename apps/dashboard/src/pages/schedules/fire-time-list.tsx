import { serverNow } from '../../lib/clock';
import { describeShift, formatInZone, formatOffset, markFireTimes } from '../../lib/fire-times';
import { relative } from '../../lib/format';
import { TimeText } from '../../components/time-text';
import styles from './schedules.module.css';

/**
 * The next fire times in the operator's zone, with UTC and the schedule's own clock on hover. A fire
 * time after which the schedule's zone changes offset (a daylight-saving transition) is marked.
 */
export function FireTimeList({ isos, timezone }: { isos: string[]; timezone: string }) {
  if (isos.length === 0) return <p className="muted">No fire time ahead.</p>;
  const now = serverNow();
  return (
    <ol className={styles.fireTimes} data-testid="fire-times">
      {markFireTimes(isos, timezone, new Date(now)).map((fire) => (
        <li key={fire.iso} data-testid="fire-time" data-iso={fire.iso}>
          <TimeText iso={fire.iso} mode="timestamp" note={`${formatInZone(fire.iso, timezone)} in ${timezone}, the schedule's zone`} />
          <span className="muted">{relative(fire.iso, now)}</span>
          {fire.shift && (
            <span
              className={styles.dst}
              title={`Daylight saving in ${timezone} before this slot: ${formatOffset(fire.shift.from)} → ${formatOffset(fire.shift.to)}`}
              data-testid="dst-mark"
            >
              DST: {describeShift(fire.shift)}
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}
