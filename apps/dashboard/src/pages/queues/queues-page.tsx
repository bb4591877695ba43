import { useQueues } from '../../api/queues';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { QueueCard } from './queue-card';

/** The queues the module declares: what each runs, what waits for it and why. */
export function QueuesPage() {
  const queues = useQueues();
  if (queues.isPending) return <Notice title="Loading queues…" />;
  if (!queues.data) return <ErrorBox error={queues.error} />;
  return (
    <PageLayout title="Queues" note={`${queues.data.length} declared`}>
      {queues.isError && <ErrorBox error={queues.error} />}
      {queues.data.length === 0 && (
        <Notice title="No queue">
          Declare queues in the module's options:{' '}
          <code>
            DurableModule.forRoot({'{'} queues: {'{'} llm: {'{'} concurrency: 20 {'}'} {'}'} {'}'})
          </code>
          , then{' '}
          <code>
            @Workflow({'{'} queue: 'llm' {'}'})
          </code>
          .
        </Notice>
      )}
      {queues.data.map((queue) => (
        <QueueCard key={queue.name} queue={queue} />
      ))}
    </PageLayout>
  );
}
