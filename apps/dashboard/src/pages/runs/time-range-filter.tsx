import { serverNow } from '../../lib/clock';
import { fromLocalInput, toLocalInput } from '../../lib/datetime-local';
import { Field } from '../../components/field';
import styles from './runs.module.css';
import { RANGE_PRESETS, type RunsView } from './runs-view';

interface TimeRangeFilterProps {
  view: RunsView;
  apply: (change: Partial<RunsView>, replace?: boolean) => void;
}

/**
 * Runs created (or last changed) in a range: a preset ending now, or a custom one from and to
 * instants typed in the operator's zone (kept in the URL as UTC instants; the server's `…After` is
 * inclusive, `…Before` exclusive).
 */
export function TimeRangeFilter({ view, apply }: TimeRangeFilterProps) {
  const pick = (range: string) => {
    if (range !== 'custom') return apply({ range: range as RunsView['range'] });
    // A custom range opens on the last hour, to the minute, ready to be edited; its end stays open.
    const from = view.from || new Date(Math.floor((serverNow() - 3_600_000) / 60_000) * 60_000).toISOString();
    apply({ range: 'custom', from });
  };
  const edit = (end: 'from' | 'to', value: string) => {
    const ms = fromLocalInput(value);
    apply({ [end]: ms === undefined ? '' : new Date(ms).toISOString() }, true);
  };
  return (
    <>
      <Field label="Time">
        <select value={view.time} onChange={(e) => apply({ time: e.target.value as RunsView['time'] })} data-testid="filter-time">
          <option value="created">created</option>
          <option value="updated">updated</option>
        </select>
      </Field>
      <Field label="Range">
        <select value={view.range} onChange={(e) => pick(e.target.value)} data-testid="filter-range">
          <option value="">any time</option>
          {RANGE_PRESETS.map((preset) => (
            <option key={preset.id} value={preset.id}>
              {preset.label}
            </option>
          ))}
          <option value="custom">custom…</option>
        </select>
      </Field>
      {view.range === 'custom' && (
        <>
          <Field label="From (your time)">
            <input
              type="datetime-local"
              step={1}
              value={view.from ? toLocalInput(Date.parse(view.from), true) : ''}
              onChange={(e) => edit('from', e.target.value)}
              className={styles.timeInput}
              data-testid="filter-from"
            />
          </Field>
          <Field label="To (your time)">
            <input
              type="datetime-local"
              step={1}
              value={view.to ? toLocalInput(Date.parse(view.to), true) : ''}
              onChange={(e) => edit('to', e.target.value)}
              className={styles.timeInput}
              data-testid="filter-to"
            />
          </Field>
        </>
      )}
    </>
  );
}
