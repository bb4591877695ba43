import { useQueueNames } from '../../api/queues';
import { useSchedules } from '../../api/schedules';
import { useWorkflows } from '../../api/workflows';
import { RUN_STATUSES, WAIT_KIND_DECLARATIONS, WAIT_KINDS } from '../../api/types';
import { useEffect, useRef } from 'react';
import { navigate } from '../../app/router';
import { takeFocusRequest, useShortcut } from '../../app/shortcuts';
import { Button } from '../../components/button';
import { DebouncedInput } from '../../components/debounced-input';
import { Field } from '../../components/field';
import { RunLink } from '../../components/run-link';
import styles from './runs.module.css';
import { DEFAULT_STATUS, PAGE_SIZES, type RunsView, runsHref, withFilter } from './runs-view';
import { TimeRangeFilter } from './time-range-filter';

/** Filters write to the hash; the list reads from it. Typing replaces the history entry, picking pushes one. */
export function RunsFilters({ view }: { view: RunsView }) {
  const workflows = useWorkflows();
  const schedules = useSchedules();
  const apply = (change: Partial<RunsView>, replace = false) => navigate(runsHref(withFilter(view, change)), { replace });

  const names = workflows.data?.map((w) => w.name) ?? [];
  if (view.workflow && !names.includes(view.workflow)) names.unshift(view.workflow); // a workflow not registered on this instance
  const scheduleNames = schedules.data?.map((s) => s.name) ?? [];
  if (view.schedule && !scheduleNames.includes(view.schedule)) scheduleNames.unshift(view.schedule); // linked before the list loads
  const queueNames = useQueueNames();
  if (view.queue && !queueNames.includes(view.queue)) queueNames.unshift(view.queue); // linked before the list loads, or no longer declared
  const statusIsCustom = view.status !== 'all' && !RUN_STATUSES.includes(view.status as never);

  // `/` focuses the search, here or (through a focus request) from any other page.
  const search = useRef<HTMLInputElement>(null);
  const focusSearch = () => search.current?.focus();
  useShortcut({ keys: '/', label: 'Search the runs (id prefix or keys)', group: 'Anywhere' }, focusSearch);
  useEffect(() => {
    if (takeFocusRequest('runs-search')) focusSearch();
  }, []);

  return (
    <div className={styles.filters}>
      <Field label="Status">
        <select value={view.status} onChange={(e) => apply({ status: e.target.value })} data-testid="filter-status">
          <option value="all">all</option>
          {RUN_STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
          {statusIsCustom && <option value={view.status}>{view.status}</option>}
        </select>
      </Field>
      <NameFilter label="Workflow" field="workflow" names={names} view={view} apply={apply} />
      <NameFilter label="Schedule" field="schedule" names={scheduleNames} view={view} apply={apply} />
      {queueNames.length > 0 && <NameFilter label="Queue" field="queue" names={queueNames} view={view} apply={apply} />}
      <Field label="Waiting for">
        <select value={view.waitingFor} onChange={(e) => apply({ waitingFor: e.target.value })} data-testid="filter-kind">
          <option value="">anything</option>
          {WAIT_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {WAIT_KIND_DECLARATIONS[kind].label}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Signal or channel">
        <DebouncedInput
          type="search"
          placeholder="name"
          value={view.signal}
          onCommit={(signal) => apply({ signal }, true)}
          data-testid="filter-signal"
          className={styles.signalInput}
        />
      </Field>
      <Field label="Run id or keys">
        <DebouncedInput
          type="search"
          placeholder="id prefix, orderId:A-17"
          title='A run id prefix and name:value business keys, all of which a run must have: customer:c-9 orderId:A-17. Quote a value with spaces: note:"two words".'
          value={view.q}
          ref={search}
          onCommit={(q) => apply({ q }, true)}
          data-testid="filter-q"
          className={styles.searchInput}
        />
      </Field>
      {view.forkedFrom && (
        // Set by a run's link to its forks: shown, to be lifted, as no list of names holds it.
        <Field label="Forks of" as="div">
          <span data-testid="filter-forked-from">
            <RunLink runId={view.forkedFrom} />
            <Button
              small
              variant="ghost"
              title="Lift this filter"
              onClick={() => apply({ forkedFrom: '' })}
              data-testid="filter-forked-from-clear"
            >
              ×
            </Button>
          </span>
        </Field>
      )}
      <TimeRangeFilter view={view} apply={apply} />
      <Field label="Per page">
        <select value={view.limit} onChange={(e) => apply({ limit: Number(e.target.value) })} data-testid="filter-limit">
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </Field>
      {(view.status !== DEFAULT_STATUS ||
        view.workflow ||
        view.schedule ||
        view.queue ||
        view.forkedFrom ||
        view.waitingFor ||
        view.signal ||
        view.q ||
        view.range) && (
        <a
          className={styles.reset}
          href={runsHref(
            withFilter(view, {
              status: DEFAULT_STATUS,
              workflow: '',
              schedule: '',
              queue: '',
              forkedFrom: '',
              waitingFor: '',
              signal: '',
              q: '',
              time: 'created',
              range: '',
              from: '',
              to: '',
            }),
          )}
        >
          Reset filters
        </a>
      )}
    </div>
  );
}

/** A filter by one of a list of names (a workflow, a schedule, a queue), or any. */
function NameFilter({
  label,
  field,
  names,
  view,
  apply,
}: {
  label: string;
  field: 'workflow' | 'schedule' | 'queue';
  names: string[];
  view: RunsView;
  apply: (change: Partial<RunsView>) => void;
}) {
  return (
    <Field label={label}>
      <select value={view[field]} onChange={(e) => apply({ [field]: e.target.value })} data-testid={`filter-${field}`}>
        <option value="">any</option>
        {names.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </Field>
  );
}
