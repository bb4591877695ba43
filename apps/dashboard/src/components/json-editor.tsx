import type { Ref, TextareaHTMLAttributes } from 'react';
import styles from './json-editor.module.css';

interface JsonEditorProps extends Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, 'onChange' | 'value'> {
  value: string;
  onChange: (text: string) => void;
  invalid?: boolean;
  ref?: Ref<HTMLTextAreaElement>;
}

/** A plain textarea for JSON: monospace, no spellcheck, marked when its content does not pass. */
export function JsonEditor({ value, onChange, invalid = false, rows = 6, className, ...props }: JsonEditorProps) {
  return (
    <textarea
      {...props}
      rows={rows}
      value={value}
      spellCheck={false}
      autoCapitalize="off"
      autoComplete="off"
      aria-invalid={invalid || undefined}
      className={[styles.editor, invalid ? styles.invalid : '', className ?? ''].filter(Boolean).join(' ')}
      onChange={(event) => onChange(event.target.value)}
    />
  );
}
