import { type FormEvent, type ReactNode, useEffect, useRef } from 'react';
import { createPortal } from 'react-dom';
import styles from './modal.module.css';

interface ModalProps {
  title: string;
  children: ReactNode;
  /** Buttons, right-aligned under the body. */
  footer: ReactNode;
  onClose: () => void;
  /** Called when the form inside is submitted (Enter in a field, or a submit button). */
  onSubmit?: () => void;
}

/**
 * A native modal <dialog>: focus trap, Escape and the backdrop come with the browser.
 * Mount it to open it, unmount it to close it. Portalled to <body>, so it never nests in a caller's form.
 */
export function Modal({ title, children, footer, onClose, onSubmit }: ModalProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit?.();
  };

  return createPortal(
    <dialog
      ref={ref}
      className={styles.dialog}
      aria-label={title}
      onCancel={(event) => {
        event.preventDefault(); // Escape: let React unmount us rather than the browser closing behind its back
        onClose();
      }}
    >
      <form onSubmit={submit} className={styles.form}>
        <h2 className={styles.title}>{title}</h2>
        <div className={styles.body}>{children}</div>
        <div className={styles.footer}>{footer}</div>
      </form>
    </dialog>,
    document.body,
  );
}
