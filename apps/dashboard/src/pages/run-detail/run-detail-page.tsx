import { isApiError } from '../../api/client';
import { useRun } from '../../api/runs';
import type { RunDetail } from '../../api/types';
import { navigate, runHref } from '../../app/router';
import { useCanMutate } from '../../app/session-context';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { Panel } from '../../components/panel';
import { type TabSpec, Tabs } from '../../components/tabs';
import { acceptsDeliveries, deadlineCounts } from '../../lib/run-status';
import { DeadlineForm } from './deadline-form';
import { MessageForm } from './message-form';
import { RunActions } from './run-actions';
import { RunHeader } from './run-header';
import styles from './run-detail.module.css';
import { SignalForm } from './signal-form';
import { ChannelTab } from './tabs/channel-tab';
import { ChildrenTab } from './tabs/children-tab';
import { HistoryTab } from './tabs/history-tab';
import { JournalTab } from './tabs/journal-tab';
import { SignalsTab } from './tabs/signals-tab';
import { SummaryTab } from './tabs/summary-tab';
import { TimelineTab } from './tabs/timeline-tab';

type TabId = 'summary' | 'journal' | 'timeline' | 'signals' | 'channel' | 'children' | 'history';
const TAB_IDS: readonly TabId[] = ['summary', 'journal', 'timeline', 'signals', 'channel', 'children', 'history'];

/** One run, as tabs (like Temporal's run page), with the operator's actions alongside. */
export function RunDetailPage({ runId, params }: { runId: string; params: URLSearchParams }) {
  const query = useRun(runId);
  const canMutate = useCanMutate();
  const requested = params.get('tab') as TabId | null;
  const tab: TabId = requested && TAB_IDS.includes(requested) ? requested : 'summary';

  if (query.isPending) return <Notice title="Loading run…" />;
  if (!query.data) {
    if (isApiError(query.error) && query.error.status === 404) {
      return (
        <Notice title="Run not found">
          <p>
            No run has the id <span className="mono">{runId}</span>.
          </p>
          <a href="#/runs">Back to the runs</a>
        </Notice>
      );
    }
    return <ErrorBox error={query.error} />;
  }

  const detail = query.data;
  const tabs: TabSpec<TabId>[] = [
    { id: 'summary', label: 'Summary' },
    { id: 'journal', label: 'Journal', count: detail.steps.length },
    { id: 'timeline', label: 'Timeline' },
    { id: 'signals', label: 'Signals', count: detail.signals.length + detail.pendingSignals.length },
    { id: 'channel', label: 'Channel', count: detail.messages.length },
    { id: 'children', label: 'Children', count: detail.children.length },
    { id: 'history', label: 'History', count: detail.history.length },
  ];

  return (
    <div className={styles.page}>
      <RunHeader detail={detail} />
      {/* A failed refresh keeps the last good data on screen, with the error above it. */}
      {query.isError && <ErrorBox error={query.error} />}
      <div className={styles.columns}>
        <div className={styles.main}>
          <Tabs
            tabs={tabs}
            active={tab}
            onSelect={(id) => navigate(runHref(runId, { tab: id === 'summary' ? undefined : id }), { replace: true })}
          />
          <div role="tabpanel">
            <TabPanel tab={tab} detail={detail} />
          </div>
        </div>
        <aside className={styles.aside}>{canMutate ? <ActionsColumn detail={detail} /> : <ReadOnlyNote />}</aside>
      </div>
    </div>
  );
}

function TabPanel({ tab, detail }: { tab: TabId; detail: RunDetail }) {
  switch (tab) {
    case 'summary':
      return <SummaryTab run={detail.run} steps={detail.steps} />;
    case 'journal':
      return <JournalTab detail={detail} />;
    case 'timeline':
      return <TimelineTab detail={detail} />;
    case 'signals':
      return <SignalsTab signals={detail.signals} pending={detail.pendingSignals} />;
    case 'channel':
      return <ChannelTab messages={detail.messages} />;
    case 'children':
      return <ChildrenTab runs={detail.children} />;
    case 'history':
      return <HistoryTab runId={detail.run.runId} newest={detail.history} newestMore={detail.historyMore} />;
  }
}

function ActionsColumn({ detail }: { detail: RunDetail }) {
  const open = acceptsDeliveries(detail.run.status);
  return (
    <>
      <Panel title="Actions">
        <RunActions detail={detail} />
      </Panel>
      {deadlineCounts(detail.run.status) && (
        <Panel title="Deadline">
          <DeadlineForm run={detail.run} />
        </Panel>
      )}
      {open ? (
        <>
          <Panel title="Deliver a signal">
            <SignalForm detail={detail} />
          </Panel>
          <Panel title="Send a channel message">
            <MessageForm detail={detail} />
          </Panel>
        </>
      ) : (
        <p className={styles.closedNote}>A {detail.run.status} run accepts no signal or message.</p>
      )}
    </>
  );
}

function ReadOnlyNote() {
  return (
    <Panel title="Actions">
      <p className="muted">The dashboard is read-only: actions are disabled on this server.</p>
    </Panel>
  );
}
