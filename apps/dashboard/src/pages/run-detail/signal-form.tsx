import { type FormEvent, useMemo, useRef, useState } from 'react';
import { isApiError } from '../../api/client';
import { useDeliverSignal } from '../../api/run-actions';
import type { RunDetail } from '../../api/types';
import { useWorkflow } from '../../api/workflows';
import { useShortcut } from '../../app/shortcuts';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { checkDraft, initialDraft, PayloadEditor, type PayloadDraft } from '../../components/payload-editor';
import { SchemaView } from '../../components/schema-view';
import { TimeText } from '../../components/time-text';
import styles from './run-detail.module.css';

/**
 * Delivers a signal. The name defaults to the one the run awaits; otherwise the operator picks among
 * the pending ones. With a declared JSON Schema the payload is a form generated from it, opened on a
 * template that passes (the raw JSON a toggle away); without one, the JSON editor. The payload must
 * match the schema before Send is enabled; the server's own validation errors show under the form and
 * at their fields. Local problems show once the operator edits the payload, not on a form they have not touched yet.
 */
export function SignalForm({ detail }: { detail: RunDetail }) {
  const { run, pendingSignals } = detail;
  const workflow = useWorkflow(run.workflow);
  const deliver = useDeliverSignal();
  const awaited = run.waiting?.kind === 'signal' ? run.waiting.name : undefined;
  // Follow the awaited or first pending name (it moves as the run goes on) until the operator picks one.
  const [picked, setPicked] = useState<string | null>(null);
  const name = picked ?? awaited ?? pendingSignals.find((s) => s.awaited)?.name ?? pendingSignals[0]?.name ?? '';
  const schema = pendingSignals.find((s) => s.name === name)?.jsonSchema ?? workflow?.signals?.find((s) => s.name === name)?.jsonSchema;
  // The payload being written belongs to the name it was written for: another name opens its own template.
  const [edited, setEdited] = useState<{ name: string; draft: PayloadDraft } | null>(null);
  const opened = useMemo(() => initialDraft(schema), [schema]);
  const draft = edited?.name === name ? edited.draft : opened;
  const check = checkDraft(draft, schema);
  const canSend = Boolean(name.trim()) && check.valid && !deliver.isPending;

  // `s`: straight to the payload (its first field in the form) when the name is known, else to the name.
  const nameField = useRef<HTMLInputElement & HTMLSelectElement>(null);
  const payloadField = useRef<HTMLTextAreaElement>(null);
  const payloadForm = useRef<HTMLDivElement>(null);
  useShortcut({ keys: 's', label: 'Deliver a signal: go to its form', group: 'This run' }, () => {
    if (!name) return nameField.current?.focus();
    if (draft.mode === 'form' && payloadForm.current)
      return payloadForm.current.querySelector<HTMLElement>('input, select, textarea')?.focus();
    payloadField.current?.focus();
  });

  const edit = (apply: () => void) => {
    deliver.reset(); // a server error belongs to what was sent, not to what is being typed
    apply();
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!canSend) return;
    deliver.mutate(
      { runId: run.runId, name: name.trim(), payload: check.value },
      {
        // Back to the defaults: the next awaited signal and an empty payload, so a second click
        // cannot send this payload under another name.
        onSuccess: () => {
          setPicked(null);
          setEdited(null);
        },
      },
    );
  };

  return (
    <form className={styles.form} onSubmit={submit} data-testid="signal-form">
      <Field label="Signal">
        {!awaited && pendingSignals.length > 0 ? (
          <select ref={nameField} value={name} onChange={(e) => edit(() => setPicked(e.target.value))} data-testid="signal-name">
            {pendingSignals.map((signal) => (
              <option key={signal.name} value={signal.name}>
                {signal.name}
                {signal.awaited ? ' (awaited)' : ''}
              </option>
            ))}
          </select>
        ) : (
          <input
            ref={nameField}
            value={name}
            placeholder="signal name"
            onChange={(e) => edit(() => setPicked(e.target.value))}
            className="mono"
            data-testid="signal-name"
          />
        )}
      </Field>
      {schema && <SchemaView schema={schema} />}
      <PayloadEditor
        schema={schema}
        draft={draft}
        onChange={(next) => edit(() => setEdited({ name, draft: next }))}
        testIdPrefix="signal"
        serverIssues={isApiError(deliver.error) ? deliver.error.issues : undefined}
        textareaRef={payloadField}
        formRef={payloadForm}
      />
      {/* The form shows its problems at its fields; the JSON editor's show here, with the server's. */}
      <ErrorBox issues={draft.touched && draft.mode === 'json' ? check.issues : []} error={deliver.error} testId="signal-error" />
      {deliver.data && (
        <p className={styles.success} data-testid="signal-result">
          {deliver.data.accepted ? (
            <>
              <code>{deliver.data.name}</code> delivered at <TimeText iso={deliver.data.deliveredAt} mode="clock" />.
            </>
          ) : (
            <>
              <code>{deliver.data.name}</code> was already delivered: this one was ignored, the first payload wins.
            </>
          )}
        </p>
      )}
      <div className={styles.formFooter}>
        <Button
          type="submit"
          variant="primary"
          disabled={!canSend}
          title={check.valid ? undefined : 'Fix the payload first.'}
          data-testid="signal-send"
        >
          {deliver.isPending ? 'Sending…' : 'Deliver signal'}
        </Button>
      </div>
    </form>
  );
}
