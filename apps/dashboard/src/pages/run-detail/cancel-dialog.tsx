import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Field } from '../../components/field';

interface CancelDialogProps {
  runId: string;
  childCount: number;
  busy: boolean;
  error: unknown;
  onConfirm: (reason: string | undefined) => void;
  onClose: () => void;
}

export function CancelDialog({ runId, childCount, busy, error, onConfirm, onClose }: CancelDialogProps) {
  const [reason, setReason] = useState('');
  return (
    <ConfirmDialog
      title="Cancel this run?"
      confirmLabel="Cancel run"
      danger
      busy={busy}
      error={error}
      onConfirm={() => onConfirm(reason.trim() || undefined)}
      onClose={onClose}
    >
      <p>
        <span className="mono">{runId}</span> stops for good
        {childCount > 0 ? `, with its unfinished children (${childCount} known)` : ''}. A step in flight stops at its next durable call.
        This cannot be undone.
      </p>
      <Field label="Reason (recorded in the run's history)">
        <input value={reason} onChange={(e) => setReason(e.target.value)} autoFocus data-testid="cancel-reason" />
      </Field>
    </ConfirmDialog>
  );
}
