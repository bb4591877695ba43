import { type InputHTMLAttributes, type Ref, useEffect, useRef, useState } from 'react';

interface DebouncedInputProps extends Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange'> {
  value: string;
  onCommit: (value: string) => void;
  delayMs?: number;
  ref?: Ref<HTMLInputElement>;
}

/**
 * A text input that reports its value after a pause in typing (or on Enter), so a filter does not
 * fire a request per keystroke. Follows `value` when it changes from outside (back button, a link).
 */
export function DebouncedInput({ value, onCommit, delayMs = 300, ...props }: DebouncedInputProps) {
  const [draft, setDraft] = useState(value);
  const committed = useRef(value);
  // The latest callback, read when the timer fires: a parent re-rendering (polling) must not restart it.
  const commit = useRef(onCommit);
  commit.current = onCommit;

  useEffect(() => {
    committed.current = value;
    setDraft(value);
  }, [value]);

  useEffect(() => {
    if (draft === committed.current) return;
    const timer = window.setTimeout(() => {
      // Enter may have committed it already: committing again would navigate with the view of that
      // time, and if the operator had moved on since (a link, the back button) it would take them back.
      if (draft === committed.current) return;
      committed.current = draft;
      commit.current(draft);
    }, delayMs);
    return () => window.clearTimeout(timer);
  }, [draft, delayMs]);

  return (
    <input
      {...props}
      value={draft}
      onChange={(event) => setDraft(event.target.value)}
      onKeyDown={(event) => {
        if (event.key === 'Enter' && draft !== committed.current) {
          committed.current = draft;
          commit.current(draft);
        }
      }}
    />
  );
}
