import { isApiError } from '../api/client';
import type { PayloadIssue } from '../api/types';
import styles from './error-box.module.css';

interface ErrorBoxProps {
  /** An error thrown by a request (the server's message and, for INVALID_PAYLOAD, its issues). */
  error?: unknown;
  /** Problems found before sending: bad JSON, schema mismatches. */
  issues?: PayloadIssue[];
  testId?: string;
}

/** Errors shown inline, next to the form that caused them. */
export function ErrorBox({ error, issues = [], testId }: ErrorBoxProps) {
  const message = error ? messageOf(error) : undefined;
  const all = [...issues, ...(isApiError(error) ? error.issues : [])];
  if (!message && all.length === 0) return null;
  return (
    <div className={styles.box} role="alert" data-testid={testId}>
      {message && (
        <p className={styles.message}>
          {isApiError(error) && error.code && <span className={styles.code}>{error.code}</span>}
          {message}
        </p>
      )}
      {all.length > 0 && (
        <ul className={styles.issues}>
          {all.map((issue, index) => (
            <li key={index}>
              {issue.path && <code>{formatPath(issue.path)}</code>} {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

// The contract says `path` is a string; tolerate an array of segments too.
function formatPath(path: unknown): string {
  return Array.isArray(path) ? path.join('.') : String(path);
}
