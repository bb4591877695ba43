import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { ErrorBox } from '../../components/error-box';
import { Field } from '../../components/field';
import { JsonEditor } from '../../components/json-editor';
import { checkJsonInput } from '../../lib/json-input';

interface BulkSignalDialogProps {
  count: number;
  defaultName: string;
  busy: boolean;
  error: unknown;
  onConfirm: (name: string, payload: unknown) => void;
  onClose: () => void;
}

/** One signal, one payload, for every selected run. The JSON must parse before it can be sent. */
export function BulkSignalDialog({ count, defaultName, busy, error, onConfirm, onClose }: BulkSignalDialogProps) {
  const [name, setName] = useState(defaultName);
  const [text, setText] = useState('{}');
  const check = checkJsonInput(text);
  return (
    <ConfirmDialog
      title={`Deliver a signal to ${count} run${count === 1 ? '' : 's'}`}
      confirmLabel="Deliver signal"
      canConfirm={Boolean(name.trim()) && check.valid}
      busy={busy}
      error={error}
      onConfirm={() => check.valid && onConfirm(name.trim(), check.value)}
      onClose={onClose}
    >
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
