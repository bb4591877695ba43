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

/** The fields beside the input and run id, as typed; `startAtIncomplete`: the date and time input holds a half-typed value. */
interface StartFields {
  delay: string;
  startAt: string;
  startAtIncomplete: boolean;
  timeout: string;
  keys: string;
}

/**
 * The start's options from the form's fields, or what is wrong with them. A duration needs its unit (the
 * server would read digits alone as milliseconds: a timeout of "30" would fail the run at once). The keys
 * are typed as the runs search takes them (`orderId:A-17 note:"two words"`); the server checks the rest.
 */
function startOptions(fields: StartFields): { options: Omit<StartRunBody, 'workflow' | 'input' | 'runId'>; issues: PayloadIssue[] } {
  const issues: PayloadIssue[] = [];
  for (const field of ['delay', 'timeout'] as const)
    if (/^\d+$/.test(fields[field].trim())) issues.push({ path: field, message: 'Give a unit: 30s, 5m, 2h or 7d.' });
  // An incomplete date and time reads '' (no instant), which would start the run now.
  if (fields.startAtIncomplete) issues.push({ path: 'startAt', message: 'Finish the date and time, or clear it.' });
  const startAt = fromLocalInput(fields.startAt);
  if (fields.delay.trim() && startAt !== undefined)
    issues.push({ path: 'startAt', message: 'Give a delay or an instant to start at, not both.' });
  const { idPrefix, keys } = parseRunSearch(fields.keys);
  if (idPrefix)
    issues.push({ path: 'keys', message: `Write each key as name:value (note:"two words" for spaces); "${idPrefix}" is not one.` });
  return {
    options: {
      delay: fields.delay.trim() || undefined,
      startAt: startAt === undefined ? undefined : new Date(startAt).toISOString(),
      timeout: fields.timeout.trim() || undefined,
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
  const [fields, setFields] = useState<StartFields>({ delay: '', startAt: '', startAtIncomplete: false, timeout: '', keys: '' });
  const [existing, setExisting] = useState<StartRunResult | null>(null);
  const check = checkJsonInput(text);
  const { options, issues } = startOptions(fields);
  const canStart = Boolean(workflow) && check.valid && !issues.length && !start.isPending;
  const info = workflows.find((w) => w.name === workflow);

  const edit = (apply: () => void) => {
    start.reset();
    setExisting(null);
    apply();
  };
  const readStartAt = (input: HTMLInputElement) => {
    if (input.value !== fields.startAt || input.validity.badInput !== fields.startAtIncomplete)
      edit(() => setFields({ ...fields, startAt: input.value, startAtIncomplete: input.validity.badInput }));
  };
  const textInput = (field: 'delay' | 'timeout' | 'keys', placeholder: string, testId: string) => (
    <input
      value={fields[field]}
      onChange={(e) => edit(() => setFields({ ...fields, [field]: e.target.value }))}
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
        {textInput('delay', '5m', 'start-delay')}
      </Field>
      <Field label="Or start at (optional)" hint="An instant in your time zone; the run waits until then.">
        <input
          type="datetime-local"
          step={1}
          value={fields.startAt}
          onChange={(e) => readStartAt(e.currentTarget)}
          // A half-typed value changes nothing (it reads ''), so no change event tells of it: keys and leaving do.
          onKeyUp={(e) => readStartAt(e.currentTarget)}
          onBlur={(e) => readStartAt(e.currentTarget)}
          data-testid="start-at"
        />
      </Field>
      <Field
        label="Timeout (optional)"
        hint={
          <span data-testid="start-timeout-hint">
            The run's deadline: this long after the start (after it begins, if it waits in a queue or for its start instant), such as 2h
            {info && (
              <>
                , with {formatExactSpan(info.deadlineGraceMs)} of grace to clean up; empty:{' '}
                {info.timeoutMs ? `the workflow's own, ${formatExactSpan(info.timeoutMs)}` : 'none (the workflow has no timeout)'}
              </>
            )}
            .
          </span>
        }
      >
        {textInput('timeout', '2h', 'start-timeout')}
      </Field>
      <Field label="Business keys (optional)" hint='name:value terms, as the runs search takes them: orderId:A-17 note:"two words".'>
        {textInput('keys', 'orderId:A-17', 'start-keys')}
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
