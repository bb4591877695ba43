import type { DeclaredName, WorkflowInfo } from '../../api/types';
import { hrefFor } from '../../app/router';
import { Button } from '../../components/button';
import { SchemaView } from '../../components/schema-view';
import { formatExactSpan } from '../../lib/format';
import styles from './workflows.module.css';

interface WorkflowCardProps {
  workflow: WorkflowInfo;
  /** Absent in read-only mode. */
  onStart?: () => void;
}

/** A registered workflow: its retry budget, its queue and timeout, the signals and channels it declares, their schemas. */
export function WorkflowCard({ workflow, onStart }: WorkflowCardProps) {
  return (
    <article className={styles.card} data-testid="workflow" data-name={workflow.name}>
      <header className={styles.cardHeader}>
        <h2 className={styles.name}>{workflow.name}</h2>
        <span className="muted">up to {workflow.retry.maxAttempts} attempts</span>
        {workflow.queue !== null && (
          <a href={hrefFor('/queues')} title="Its runs wait in this queue, under its limits." data-testid="workflow-queue">
            queue {workflow.queue}
          </a>
        )}
        {workflow.timeoutMs !== null && (
          <span
            className="muted"
            title={`A run fails this long after it begins (unless its start gives another deadline), after ${formatExactSpan(workflow.deadlineGraceMs)} of grace to clean up.`}
            data-testid="workflow-timeout"
          >
            timeout {formatExactSpan(workflow.timeoutMs)}
          </span>
        )}
        <span className={styles.spacer} />
        <a href={hrefFor('/runs', { status: 'all', workflow: workflow.name })}>runs</a>
        <a href={hrefFor('/runs', { status: 'waiting', workflow: workflow.name })}>waiting</a>
        {onStart && (
          <Button small onClick={onStart}>
            Start…
          </Button>
        )}
      </header>
      <div className={styles.declared}>
        <Declared title="Signals" names={workflow.signals} />
        <Declared title="Channels" names={workflow.channels} />
      </div>
    </article>
  );
}

function Declared({ title, names }: { title: string; names: DeclaredName[] | null }) {
  return (
    <section>
      <h3 className={styles.declaredTitle}>{title}</h3>
      {names === null ? (
        <p className="muted">Not declared: any name is accepted.</p>
      ) : names.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul className={styles.names}>
          {names.map((entry) => (
            <li key={entry.name}>
              <code>{entry.name}</code>
              <SchemaView schema={entry.jsonSchema} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
