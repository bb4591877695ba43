import { type ReactNode, useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { JsonEditor } from '../../components/json-editor';
import { checkJsonInput } from '../../lib/json-input';

interface BulkSignalDialogProps {
  title: string;
  confirmLabel?: string;
  defaultName: string;
  /** False until the runs it goes to are known (a filter's preview, loading). */
  ready?: boolean;
  busy: boolean;
  error: unknown;
  onConfirm: (name: string, payload: unknown) => void;
  onClose: () => void;
  /** Above the form: which runs get the signal. */
  children?: ReactNode;
}

/** One signal, one payload, for several runs. The JSON must parse before it can be sent. */
export function BulkSignalDialog({
  title,
  confirmLabel = 'Deliver signal',
  defaultName,
  ready = true,
  busy,
  error,
  onConfirm,
  onClose,
  children,
}: BulkSignalDialogProps) {
  const [name, setName] = useState(defaultName);
  const [text, setText] = useState('{}');
  const check = checkJsonInput(text);
  return (
    <ConfirmDialog
      title={title}
      confirmLabel={confirmLabel}
      canConfirm={ready && Boolean(name.trim()) && check.valid}
      busy={busy}
      error={error}
      onConfirm={() => check.valid && onConfirm(name.trim(), check.value)}
      onClose={onClose}
    >
      {children}
      <Field label="Signal name">
        <input value={name} onChange={(e) => setName(e.target.value)} autoFocus data-testid="signal-name" />
      </Field>
      <Field label="Payload (JSON)" hint="Each run validates it against its own declared schema.">
        <JsonEditor value={text} onChange={setText} invalid={!check.valid} data-testid="signal-payload" />
      </Field>
      <ErrorBox issues={check.issues} testId="signal-error" />
    </ConfirmDialog>
  );
}
