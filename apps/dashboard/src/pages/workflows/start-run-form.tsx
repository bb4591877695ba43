import { type FormEvent, useState } from 'react';
import { useStartRun } from '../../api/runs';
import type { PayloadIssue, StartRunBody, StartRunResult, WorkflowInfo } from '../../api/types';
import { navigate, runHref } from '../../app/router';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { JsonEditor } from '../../components/json-editor';
import { fromLocalInput } from '../../lib/datetime-local';
import { formatExactSpan } from '../../lib/format';
import { checkJsonInput } from '../../lib/json-input';
import { parseRunSearch } from '../../lib/run-search';
import styles from './workflows.module.css';

interface StartRunFormProps {
  workflows: WorkflowInfo[];
  workflow: string;
  onWorkflowChange: (name: string) => void;
}

/** A duration field as the server takes it: empty is none, digits alone are milliseconds (the server checks the rest). */
const durationOf = (text: string) => {
  const given = text.trim();
  return /^\d+$/.test(given) ? Number(given) : given || undefined;
};

interface Timing {
  delay: string;
  startAt: string;
  timeout: string;
  keys: string;
}

/**
 * The start's options from the form's fields, or what is wrong with them. The keys are typed as the runs
 * search takes them (`orderId:A-17 note:"two words"`); the server checks their names and values.
 */
function startOptions(fields: Timing): { options: Omit<StartRunBody, 'workflow' | 'input' | 'runId'>; issues: PayloadIssue[] } {
  const issues: PayloadIssue[] = [];
  const startAt = fields.startAt ? fromLocalInput(fields.startAt) : undefined;
  if (fields.startAt && startAt === undefined) issues.push({ path: 'startAt', message: 'Not a date and time.' });
  if (fields.delay.trim() && fields.startAt) issues.push({ path: 'startAt', message: 'Give a delay or an instant to start at, not both.' });
  const { idPrefix, keys } = parseRunSearch(fields.keys);
  if (idPrefix)
    issues.push({ path: 'keys', message: `Write each key as name:value (note:"two words" for spaces); "${idPrefix}" is not one.` });
  return {
    options: {
      delay: durationOf(fields.delay),
      startAt: startAt === undefined ? undefined : new Date(startAt).toISOString(),
      timeout: durationOf(fields.timeout),
      keys: Object.keys(keys).length ? keys : undefined,
    },
    issues,
  };
}

/**
 * Starts a run and opens it: now, after a delay or at an instant, with a timeout and business keys if
 * given. With a run id that already exists the server starts nothing (`created: false`); the form says
 * so instead of jumping to a run the operator did not start.
 */

export function StartRunForm({ workflows, workflow, onWorkflowChange }: StartRunFormProps) {
  const start = useStartRun();
  const [text, setText] = useState('{}');
  const [runId, setRunId] = useState('');
  const [timing, setTiming] = useState<Timing>({ delay: '', startAt: '', timeout: '', keys: '' });
  const [existing, setExisting] = useState<StartRunResult | null>(null);
  const check = checkJsonInput(text);
  const { options, issues } = startOptions(timing);
  const canStart = Boolean(workflow) && check.valid && !issues.length && !start.isPending;
  const info = workflows.find((w) => w.name === workflow);

  const edit = (apply: () => void) => {
    start.reset();
    setExisting(null);
    apply();
  };
  const timingInput = (field: 'delay' | 'timeout' | 'keys', placeholder: string, testId: string) => (
    <input
      value={timing[field]}
      onChange={(e) => edit(() => setTiming({ ...timing, [field]: e.target.value }))}
      maxLength={field === 'keys' ? undefined : 40}
      className="mono"
      placeholder={placeholder}
      data-testid={testId}
    />
  );
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!canStart) return;
    start.mutate(
      { workflow, input: check.value, runId: runId.trim() || undefined, ...options },
      { onSuccess: (result) => (result.created ? navigate(runHref(result.runId)) : setExisting(result)) },
    );
  };

  return (
    <form className={styles.startForm} onSubmit={submit} data-testid="start-form">
      <Field label="Workflow">
        <select value={workflow} onChange={(e) => edit(() => onWorkflowChange(e.target.value))} data-testid="start-workflow">
          {workflows.map((w) => (
            <option key={w.name} value={w.name}>
              {w.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Input (JSON)">
        <JsonEditor value={text} onChange={(next) => edit(() => setText(next))} invalid={!check.valid} rows={8} data-testid="start-input" />
      </Field>
      <Field label="Run id (optional)" hint="A business key such as order-123 makes the start idempotent; empty: a UUID.">
        <input
          value={runId}
          onChange={(e) => edit(() => setRunId(e.target.value))}
          maxLength={200}
          className="mono"
          data-testid="start-run-id"
        />
      </Field>
      <Field label="Start after (optional)" hint="A delay such as 30s, 5m, 2h or 7d: the run waits, then starts; empty: now.">
        {timingInput('delay', '5m', 'start-delay')}
      </Field>
      <Field label="Or start at (optional)" hint="An instant in your time zone; the run waits until then.">
        <input
          type="datetime-local"
          step={1}
          value={timing.startAt}
          onChange={(e) => edit(() => setTiming({ ...timing, startAt: e.target.value }))}
          data-testid="start-at"
        />
      </Field>
      <Field
        label="Timeout (optional)"
        hint={
          <span data-testid="start-timeout-hint">
            The run fails this long after it begins, such as 2h, with {formatExactSpan(info?.deadlineGraceMs ?? 0)} of grace to clean up;
            empty: {info?.timeoutMs ? `the workflow's own, ${formatExactSpan(info.timeoutMs)}` : 'none (the workflow has no timeout)'}.
          </span>
        }
      >
        {timingInput('timeout', '2h', 'start-timeout')}
      </Field>
      <Field label="Business keys (optional)" hint='name:value terms, as the runs search takes them: orderId:A-17 note:"two words".'>
        {timingInput('keys', 'orderId:A-17', 'start-keys')}
      </Field>
      <ErrorBox issues={[...check.issues, ...issues]} error={start.error} testId="start-error" />
      {existing && (
        <p className={styles.existing} data-testid="start-existing">
          A run with this id already exists; nothing was started. <a href={runHref(existing.runId)}>Open it</a>
        </p>
      )}
      <Button type="submit" variant="primary" disabled={!canStart} data-testid="start-submit">
        {start.isPending ? 'Starting…' : 'Start run'}
      </Button>
    </form>
  );
}
