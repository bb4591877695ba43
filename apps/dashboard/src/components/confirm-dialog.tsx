import type { ReactNode } from 'react';
import { Button } from './button';
import { ErrorBox } from './error-box';
import { Modal } from './modal';

interface ConfirmDialogProps {
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  danger?: boolean;
  /** False while the form inside is not valid yet. */
  canConfirm?: boolean;
  busy?: boolean;
  error?: unknown;
  onConfirm: () => void;
  onClose: () => void;
}

/** The gate in front of dangerous actions (cancel, anything in bulk). Its button is `confirm`. */
export function ConfirmDialog({
  title,
  children,
  confirmLabel,
  danger = false,
  canConfirm = true,
  busy = false,
  error,
  onConfirm,
  onClose,
}: ConfirmDialogProps) {
  const enabled = canConfirm && !busy;
  return (
    <Modal
      title={title}
      onClose={onClose}
      onSubmit={() => enabled && onConfirm()}
      footer={
        <>
          <Button onClick={onClose}>Back</Button>
          <Button type="submit" variant={danger ? 'danger' : 'primary'} disabled={!enabled} data-testid="confirm">
            {busy ? 'Working…' : confirmLabel}
          </Button>
        </>
      }
    >
      {children}
      <ErrorBox error={error} testId="confirm-error" />
    </Modal>
  );
}
