import { useState } from 'react';
import { useWorkflows } from '../../api/workflows';
import { useCanMutate } from '../../app/session-context';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { Panel } from '../../components/panel';
import { StartRunForm } from './start-run-form';
import { WorkflowCard } from './workflow-card';
import styles from './workflows.module.css';

/** What this application registered, and a form to start a run of any of it. */
export function WorkflowsPage() {
  const workflows = useWorkflows();
  const canMutate = useCanMutate();
  const [chosen, setChosen] = useState<string | null>(null);

  if (workflows.isPending) return <Notice title="Loading workflows…" />;
  if (workflows.isError) return <ErrorBox error={workflows.error} />;
  const list = workflows.data;
  const selected = chosen ?? list[0]?.name ?? '';

  return (
    <PageLayout title="Workflows" note={`${list.length} registered`}>
      <div className={canMutate ? styles.columns : undefined}>
        <div className={styles.list}>
          {list.length === 0 && <Notice title="No workflow is registered">Decorate a class with @Workflow() and import its module.</Notice>}
          {list.map((workflow) => (
            <WorkflowCard key={workflow.name} workflow={workflow} onStart={canMutate ? () => setChosen(workflow.name) : undefined} />
          ))}
        </div>
        {canMutate && list.length > 0 && (
          <aside className={styles.aside}>
            <Panel title="Start a run">
              <StartRunForm workflows={list} workflow={selected} onWorkflowChange={setChosen} />
            </Panel>
          </aside>
        )}
      </div>
    </PageLayout>
  );
}
