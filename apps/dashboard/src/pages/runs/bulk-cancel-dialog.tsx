import { useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Field } from '../../components/field';

interface BulkCancelDialogProps {
  count: number;
  busy: boolean;
  error: unknown;
  onConfirm: (reason: string | undefined) => void;
  onClose: () => void;
}

export function BulkCancelDialog({ count, busy, error, onConfirm, onClose }: BulkCancelDialogProps) {
  const [reason, setReason] = useState('');
  return (
    <ConfirmDialog
      title={`Cancel ${count} run${count === 1 ? '' : 's'}?`}
      confirmLabel={`Cancel ${count} run${count === 1 ? '' : 's'}`}
      danger
      busy={busy}
      error={error}
      onConfirm={() => onConfirm(reason.trim() || undefined)}
      onClose={onClose}
    >
      <p>The runs and their unfinished children stop for good. This cannot be undone.</p>
      <Field label="Reason (recorded in each run's history)">
        <input value={reason} onChange={(e) => setReason(e.target.value)} autoFocus data-testid="cancel-reason" />
      </Field>
    </ConfirmDialog>
  );
}
