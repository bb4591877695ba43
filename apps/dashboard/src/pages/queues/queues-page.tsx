import { useQueues } from '../../api/queues';
import { hrefFor } from '../../app/router';
import { plural } from '../../lib/format';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { QueueCard } from './queue-card';

/**
 * The queues the module declares: what each runs, what waits for it and why. Above them, the queues it
 * does not declare that hold pending runs: stranded by a deploy, they run only where a queue is declared.
 */
export function QueuesPage() {
  const answer = useQueues();
  if (answer.isPending) return <Notice title="Loading queues…" />;
  if (!answer.data) return <ErrorBox error={answer.error} />;
  const { queues, undeclared } = answer.data;
  return (
    <PageLayout title="Queues" note={`${queues.length} declared`}>
      {answer.isError && <ErrorBox error={answer.error} />}
      {undeclared.length > 0 && (
        <div data-testid="undeclared-queues">
          {/* Not an error in itself: pools of instances may declare different queues. */}
          <Notice title="Runs pending in queues this instance does not declare">
            Only an instance that declares a queue admits its runs; if none does any more (a deploy removed or renamed it), declare it again
            or cancel the runs.{' '}
            {undeclared.map((queue, i) => (
              <span key={queue.name} data-testid="undeclared-queue" data-name={queue.name}>
                {i > 0 && ', '}
                <code>{queue.name}</code>:{' '}
                <a href={hrefFor('/runs', { waitingFor: 'queue', queue: queue.name })}>
                  {queue.atLeast ? `${queue.pending.toLocaleString('en')}+ runs` : plural(queue.pending, 'run')} pending
                </a>
              </span>
            ))}
          </Notice>
        </div>
      )}
      {queues.length === 0 && (
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
      {queues.map((queue) => (
        <QueueCard key={queue.name} queue={queue} />
      ))}
    </PageLayout>
  );
}
