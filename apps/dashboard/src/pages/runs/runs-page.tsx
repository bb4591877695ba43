import { useState } from 'react';
import { useRuns } from '../../api/runs';
import { useCanMutate } from '../../app/session-context';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { navigate } from '../../app/router';
import { BulkBar } from './bulk-bar';
import { type BulkReport, BulkResults } from './bulk-results';
import { ColumnsMenu } from './columns-menu';
import { RunsFilters } from './runs-filters';
import { RunsTable } from './runs-table';
import styles from './runs.module.css';
import { readRunsView, runsHref, toRunFilter } from './runs-view';
import { useColumns } from './use-columns';
import { useSelection } from './use-selection';

/** The runs list: waiting runs by default, filterable, keyset-paged, refreshed every 2 s. */
export function RunsPage({ params }: { params: URLSearchParams }) {
  const view = readRunsView(params);
  const runs = useRuns(toRunFilter(view));
  const canMutate = useCanMutate();
  const selection = useSelection(runsHref(view));
  const columns = useColumns();
  const [report, setReport] = useState<BulkReport | null>(null);

  const list = runs.data?.runs ?? [];
  const nextCursor = runs.data?.nextCursor;

  return (
    <PageLayout
      title="Runs"
      note={
        <>
          {describeStatus(view.status)}
          {runs.isFetching && <span className={styles.live} title="Refreshing" />}
        </>
      }
      aside={<ColumnsMenu columns={columns} />}
    >
      <RunsFilters view={view} />
      {canMutate && <BulkBar selection={selection} runs={list} view={view} onReport={setReport} />}
      {report && <BulkResults report={report} onDismiss={() => setReport(null)} />}
      {runs.isError && <ErrorBox error={runs.error} testId="runs-error" />}

      {runs.isPending ? (
        <Notice title="Loading runs…" />
      ) : runs.isError && !runs.data ? null : list.length === 0 ? (
        <div className={styles.tableWrap}>
          <Notice title="No runs match">
            {view.page > 1 ? 'This page is empty: go back to the first page.' : 'Change or reset the filters to see more.'}
          </Notice>
        </div>
      ) : (
        <div className={runs.isPlaceholderData ? `${styles.tableWrap} ${styles.stale}` : styles.tableWrap}>
          <RunsTable runs={list} selection={canMutate ? selection : undefined} columns={columns.shown} />
        </div>
      )}

      <div className={styles.pager}>
        <Button small disabled={!view.cursor} onClick={() => navigate(runsHref({ ...view, cursor: '', page: 1 }))}>
          ⇤ First page
        </Button>
        <span className="muted">
          Page {view.page} · {list.length} run{list.length === 1 ? '' : 's'}
        </span>
        <Button
          small
          disabled={!nextCursor}
          onClick={() => nextCursor && navigate(runsHref({ ...view, cursor: nextCursor, page: view.page + 1 }))}
          data-testid="next-page"
        >
          Next →
        </Button>
      </div>
    </PageLayout>
  );
}

function describeStatus(status: string): string {
  if (status === 'all') return 'all statuses, newest first';
  return `${status.split(',').join(' or ')}, newest first`;
}
