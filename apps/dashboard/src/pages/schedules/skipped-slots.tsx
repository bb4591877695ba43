import type { SkippedSlot, SkipReason } from '../../api/types';
import { TimeText } from '../../components/time-text';
import styles from './schedules.module.css';

const REASONS: Record<SkipReason, string> = {
  overlap: 'the previous run was still unfinished (overlap policy)',
  // A pass that finds several slots due (after downtime, or late) starts only those the catch-up policy keeps.
  missed: "its time passed before a pass fired it, and the catch-up left it out (older than the window, or not the newest under 'latest')",
  paused: 'the schedule was paused',
};

/** The slots that started no run, each with why (the newest the server keeps), for a flush panel. */
export function SkippedSlots({ slots }: { slots: SkippedSlot[] }) {
  if (slots.length === 0) return <p className={`muted ${styles.empty}`}>Every slot so far started its run.</p>;
  return (
    <table data-testid="skipped-slots">
      <thead>
        <tr>
          <th>Slot (your zone)</th>
          <th>Reason</th>
          <th>Recorded</th>
        </tr>
      </thead>
      <tbody>
        {slots.map((skipped) => (
          <tr key={skipped.slot} data-testid="skipped-slot" data-reason={skipped.reason}>
            <td className={styles.nowrap}>
              <TimeText iso={skipped.slot} mode="timestamp" />
            </td>
            <td>
              <strong>{skipped.reason}</strong> <span className="muted">{REASONS[skipped.reason]}</span>
            </td>
            <td className={styles.nowrap}>
              <TimeText iso={skipped.at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
