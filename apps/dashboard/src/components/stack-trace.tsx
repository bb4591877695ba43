import styles from './stack-trace.module.css';

/**
 * The stack an error was thrown with, folded: a failure's name and message say what happened, the
 * stack where, for whoever reads on. The server caps it at 4,000 characters. Text, never markup.
 */
export function StackTrace({
  stack,
  open = false,
  testId = 'stack-trace',
}: {
  stack: string | undefined;
  open?: boolean;
  testId?: string;
}) {
  if (!stack) return null;
  return (
    <details className={styles.details} open={open} data-testid={testId}>
      <summary>Stack trace</summary>
      <pre className={styles.stack}>{stack}</pre>
    </details>
  );
}
