import type { Outcome } from '../../api/types';
import { Button } from '../../components/button';
import { Panel } from '../../components/panel';
import { RunLink } from '../../components/run-link';
import styles from './runs.module.css';

export interface BulkReport {
  label: string;
  results: Outcome[];
  /** How many runs the dialog showed: a filter matched again by the server may have found another number. */
  expected?: number;
}

/** What a bulk action did, run by run: accepted, duplicate (a redelivery), unchanged (a resume with nothing to end), or refused and why. */
export function BulkResults({ report, onDismiss }: { report: BulkReport; onDismiss: () => void }) {
  const count = (outcome: Outcome['outcome']) => report.results.filter((r) => r.outcome === outcome).length;
  const drift =
    report.expected !== undefined && report.expected !== report.results.length
      ? ` · ${report.results.length} runs matched when sent, ${report.expected} when counted`
      : '';
  // `unchanged` only where a resume met one: the other actions never answer it.
  const unchanged = count('unchanged') ? ` · ${count('unchanged')} unchanged (nothing to end)` : '';
  const summary = `${count('accepted')} accepted · ${count('duplicate')} duplicate${unchanged} · ${count('refused')} refused${drift}`;
  return (
    <Panel
      testId="bulk-results"
      title={
        <>
          {report.label}: <span className={styles.summary}>{summary}</span>
        </>
      }
      aside={
        <Button small variant="ghost" onClick={onDismiss}>
          Dismiss
        </Button>
      }
      flush
    >
      <div className={styles.resultsScroll}>
        <table>
          <tbody>
            {report.results.map((result) => (
              <tr key={result.runId} data-testid="bulk-result" data-run-id={result.runId} data-outcome={result.outcome}>
                <td className={styles.resultRun}>
                  <RunLink runId={result.runId} />
                </td>
                <td className={styles.resultOutcome}>
                  <span className={`${styles.outcome} ${styles[result.outcome]}`}>{result.outcome}</span>
                </td>
                <td className={styles.wait}>
                  {result.code && <code>{result.code}</code>} {result.message}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Panel>
  );
}
