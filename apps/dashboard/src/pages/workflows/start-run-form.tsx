import { type FormEvent, useState } from 'react';
import { useStartRun } from '../../api/runs';
import type { StartRunResult, WorkflowInfo } from '../../api/types';
import { navigate, runHref } from '../../app/router';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { JsonEditor } from '../../components/json-editor';
import { checkJsonInput } from '../../lib/json-input';
import styles from './workflows.module.css';

interface StartRunFormProps {
  workflows: WorkflowInfo[];
  workflow: string;
  onWorkflowChange: (name: string) => void;
}

/**
 * Starts a run and opens it. With a run id that already exists the server starts nothing
 * (`created: false`); the form says so instead of jumping to a run the operator did not start.
 */
/** The delay field as the server takes it: empty is none, digits alone are milliseconds. */
const startDelay = (text: string) => {
  const given = text.trim();
  return /^\d+$/.test(given) ? Number(given) : given || undefined;
};

export function StartRunForm({ workflows, workflow, onWorkflowChange }: StartRunFormProps) {
  const start = useStartRun();
  const [text, setText] = useState('{}');
  const [runId, setRunId] = useState('');
  const [delay, setDelay] = useState('');
  const [existing, setExisting] = useState<StartRunResult | null>(null);
  const check = checkJsonInput(text);
  const canStart = Boolean(workflow) && check.valid && !start.isPending;

  const edit = (apply: () => void) => {
    start.reset();
    setExisting(null);
    apply();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!canStart) return;
    start.mutate(
      { workflow, input: check.value, runId: runId.trim() || undefined, delay: startDelay(delay) },
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
        <input
          value={delay}
          onChange={(e) => edit(() => setDelay(e.target.value))}
          maxLength={40}
          className="mono"
          placeholder="5m"
          data-testid="start-delay"
        />
      </Field>
      <ErrorBox issues={check.issues} error={start.error} testId="start-error" />
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
