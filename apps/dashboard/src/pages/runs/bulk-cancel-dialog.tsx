import { type ReactNode, useState } from 'react';
import { ConfirmDialog } from '../../components/confirm-dialog';
import { Field } from '../../components/field';

interface BulkCancelDialogProps {
  title: string;
  confirmLabel: string;
  /** False until the runs it cancels are known and, for a filter, their count confirmed. */
  ready: boolean;
  busy: boolean;
  error: unknown;
  onConfirm: (reason: string | undefined) => void;
  onClose: () => void;
  /** Above the reason: which runs stop. */
  children?: ReactNode;
}

export function BulkCancelDialog({ title, confirmLabel, ready, busy, error, onConfirm, onClose, children }: BulkCancelDialogProps) {
  const [reason, setReason] = useState('');
  return (
    <ConfirmDialog
      title={title}
      confirmLabel={confirmLabel}
      danger
      canConfirm={ready}
      busy={busy}
      error={error}
      onConfirm={() => onConfirm(reason.trim() || undefined)}
      onClose={onClose}
    >
      {children}
      <p>The runs and their unfinished children stop for good. This cannot be undone.</p>
      <Field label="Reason (recorded in each run's history)">
        <input value={reason} onChange={(e) => setReason(e.target.value)} autoFocus data-testid="cancel-reason" />
      </Field>
    </ConfirmDialog>
  );
}
