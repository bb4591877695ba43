import { useEffect, useState } from 'react';
import styles from './copy-button.module.css';

/**
 * A small button that copies `text` to the clipboard ("Copy run id"). It says "Copied" for a moment,
 * and keeps what it copied in `data-copied`. Over plain HTTP the Clipboard API is absent (it needs a
 * secure context), so the copy falls back to a selected, off-screen textarea.
 */
export function CopyButton({ text, label, testId = 'copy-id' }: { text: string; label: string; testId?: string }) {
  const [copied, setCopied] = useState<string | null>(null);
  useEffect(() => {
    if (copied === null) return;
    const timer = window.setTimeout(() => setCopied(null), 1_500);
    return () => window.clearTimeout(timer);
  }, [copied]);

  return (
    <button
      type="button"
      className={styles.button}
      aria-label={`${label}: ${text}`}
      title={copied === null ? `${label}: ${text}` : 'Copied'}
      onClick={() => void copy(text).then((ok) => setCopied(ok ? text : null))}
      data-testid={testId}
      data-copied={copied ?? undefined}
    >
      {copied === null ? <CopyIcon /> : <CheckIcon />}
    </button>
  );
}

async function copy(text: string): Promise<boolean> {
  if (navigator.clipboard && window.isSecureContext) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // refused (no permission, page not focused): try the old way
    }
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = styles.offscreen;
  const focused = document.activeElement as HTMLElement | null;
  document.body.append(area);
  area.select();
  try {
    return document.execCommand('copy');
  } catch {
    return false;
  } finally {
    area.remove();
    focused?.focus();
  }
}

function CopyIcon() {
  return (
    <svg className={styles.icon} viewBox="0 0 16 16" aria-hidden="true">
      <rect x="5.5" y="5.5" width="8" height="8.5" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <path
        d="M10.5 3.5V3a1.5 1.5 0 0 0-1.5-1.5H4A1.5 1.5 0 0 0 2.5 3v6A1.5 1.5 0 0 0 4 10.5h.5"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.4"
      />
    </svg>
  );
}

function CheckIcon() {
  return (
    <svg className={styles.icon} viewBox="0 0 16 16" aria-hidden="true">
      <path d="M3 8.5l3 3 7-7" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
