import { Component, lazy, type ReactNode, type Ref, Suspense, useId } from 'react';
import type { JsonSchemaObject, PayloadIssue } from '../api/types';
import { pretty } from '../lib/format';
import { checkJsonInput, type JsonInputCheck } from '../lib/json-input';
import { validateAgainstSchema } from '../lib/json-schema';
import { formable, templateFor } from '../lib/schema-template';
import { JsonEditor } from './json-editor';
import styles from './payload-editor.module.css';
import segmented from './segmented.module.css';

/** A payload being written: as a form generated from its schema, or as JSON text. */
export interface PayloadDraft {
  mode: 'form' | 'json';
  /** The JSON editor's text (kept while the form is shown, rewritten when the form is left). */
  text: string;
  /** The form's data, as RJSF holds it (an emptied field is undefined). */
  data: unknown;
  /** Edited since it was opened: only then are its problems shown. */
  touched: boolean;
}

/**
 * The draft a payload editor opens on: with a schema a form can be built from, the form, filled with
 * a template that passes the schema (lib/schema-template.ts); without one, `{}` in the JSON editor.
 */
export function initialDraft(schema: JsonSchemaObject | undefined): PayloadDraft {
  if (!formable(schema)) return { mode: 'json', text: '{}', data: {}, touched: false };
  const data = templateFor(schema);
  return { mode: 'form', text: pretty(data), data, touched: false };
}

/** The draft's value and whether it passes: parsed from the text, or the form's data as it would be sent. */
export function checkDraft(draft: PayloadDraft, schema: JsonSchemaObject | undefined): JsonInputCheck {
  if (draft.mode === 'json') return checkJsonInput(draft.text, schema);
  const value = draft.data === undefined ? undefined : JSON.parse(JSON.stringify(draft.data));
  if (value === undefined) return { valid: false, issues: [{ path: '', message: 'Fill in the form, or enter the payload as JSON.' }] };
  const issues = validateAgainstSchema(value, schema);
  return issues.length ? { valid: false, issues } : { valid: true, value, issues: [] };
}

interface PayloadEditorProps {
  schema: JsonSchemaObject | undefined;
  draft: PayloadDraft;
  onChange: (draft: PayloadDraft) => void;
  /** `signal` or `message`: the test ids are `<prefix>-payload` (the JSON editor), `-schema-form`, `-mode-form`, `-mode-json`. */
  testIdPrefix: string;
  rows?: number;
  /** The JSON editor, for a shortcut to focus. */
  textareaRef?: Ref<HTMLTextAreaElement>;
  /** The form's container, for a shortcut to focus its first field. */
  formRef?: Ref<HTMLDivElement>;
  /** The server's issues with the payload it last refused: the form shows them at their fields. */
  serverIssues?: PayloadIssue[];
}

// RJSF and its validator load with the first form shown: the overview and the lists do without them.
const SchemaForm = lazy(() => import('./schema-form'));

/**
 * The payload of a signal or a message. With a schema a form can be built from, a form generated
 * from it by RJSF (its fields' problems inline, as they are typed), and a toggle to the JSON editor
 * and back: the form's data becomes the JSON text, and text that parses becomes the form's data.
 * Without a schema, the JSON editor alone.
 */
export function PayloadEditor({ schema, draft, onChange, testIdPrefix, rows = 5, textareaRef, formRef, serverIssues }: PayloadEditorProps) {
  const labelId = useId();
  const canForm = formable(schema);
  const check = checkDraft(draft, schema);
  const parsed = draft.mode === 'json' ? checkJsonInput(draft.text) : undefined;
  const toJson = () => onChange({ ...draft, mode: 'json', text: pretty(check.valid ? check.value : asJson(draft.data)) });
  const toForm = () => parsed?.valid && onChange({ ...draft, mode: 'form', data: parsed.value });
  const mode = canForm ? draft.mode : 'json';

  return (
    <div className={styles.editor}>
      <div className={styles.head}>
        <span className={styles.label} id={labelId}>
          {mode === 'form' ? 'Payload' : 'Payload (JSON)'}
        </span>
        {canForm && (
          <div className={segmented.group} role="group" aria-label="Edit the payload as">
            <button
              type="button"
              className={segmented.option}
              aria-pressed={mode === 'form'}
              disabled={mode === 'json' && !parsed?.valid}
              title={mode === 'json' && !parsed?.valid ? 'The JSON must parse to be shown as a form.' : 'Fields built from the JSON Schema'}
              onClick={toForm}
              data-testid={`${testIdPrefix}-mode-form`}
            >
              Form
            </button>
            <button
              type="button"
              className={segmented.option}
              aria-pressed={mode === 'json'}
              title="The payload as JSON text"
              onClick={() => mode === 'form' && toJson()}
              data-testid={`${testIdPrefix}-mode-json`}
            >
              JSON
            </button>
          </div>
        )}
      </div>
      {mode === 'form' ? (
        <div className={styles.form} ref={formRef} role="group" aria-labelledby={labelId} data-testid={`${testIdPrefix}-schema-form`}>
          <FormBoundary onFail={toJson}>
            <Suspense fallback={<p className="muted">Loading the form…</p>}>
              <SchemaForm
                schema={schema!}
                data={draft.data}
                idPrefix={testIdPrefix}
                serverIssues={serverIssues}
                onChange={(data) => onChange({ ...draft, data, touched: true })}
              />
            </Suspense>
          </FormBoundary>
        </div>
      ) : (
        <JsonEditor
          value={draft.text}
          onChange={(text) => onChange({ ...draft, text, touched: true })}
          invalid={draft.touched && !check.valid}
          ref={textareaRef}
          rows={rows}
          aria-labelledby={labelId}
          data-testid={`${testIdPrefix}-payload`}
        />
      )}
    </div>
  );
}

function asJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

/** A schema RJSF cannot draw (it throws while rendering) falls back to the JSON editor. */
class FormBoundary extends Component<{ onFail: () => void; children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };

  static getDerivedStateFromError() {
    return { failed: true };
  }

  override componentDidCatch() {
    this.props.onFail();
  }

  override render() {
    return this.state.failed ? (
      <p className="muted">This schema cannot be shown as a form: edit the payload as JSON.</p>
    ) : (
      this.props.children
    );
  }
}
