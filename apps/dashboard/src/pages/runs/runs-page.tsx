import { useState } from 'react';
import { useRuns } from '../../api/runs';
import type { RunSort } from '../../api/types';
import { useCanMutate } from '../../app/session-context';
import { Button } from '../../components/button';
import { ErrorBox } from '../../components/error-box';
import { Notice } from '../../components/notice';
import { PageLayout } from '../../components/page-layout';
import { navigate } from '../../app/router';
import { BulkBar } from './bulk-bar';
import { type BulkReport, BulkResults } from './bulk-results';
import { ColumnsMenu } from './columns-menu';
import { formatTotal, totalTitle } from './run-total';
import { RunsFilters } from './runs-filters';
import { RunsTable } from './runs-table';
import styles from './runs.module.css';
import { describeOrder, readRunsView, type RunsView, runsHref, toRunQuery, withFilter } from './runs-view';
import { useColumns } from './use-columns';
import { useSelection } from './use-selection';
import { useSummary } from './use-summary';

/** The runs list: waiting runs by default, filterable, sortable by either time, keyset-paged, kept fresh by live updates. */
export function RunsPage({ params }: { params: URLSearchParams }) {
  const view = readRunsView(params);
  const runs = useRuns(toRunQuery(view));
  const canMutate = useCanMutate();
  const selection = useSelection(runsHref(view));
  const columns = useColumns();
  const summary = useSummary();
  const [report, setReport] = useState<BulkReport | null>(null);

  const list = runs.data?.runs ?? [];
  const nextCursor = runs.data?.nextCursor;
  const total = runs.data?.total;
  const go = (change: Partial<RunsView>) => navigate(runsHref(withFilter(view, change)));
  // A click on the sorted column's header turns it around; on another column, sorts by it, newest first.
  const onSort = (sort: RunSort) => go({ sort, order: view.sort === sort && view.order === 'desc' ? 'asc' : 'desc' });

  return (
    <PageLayout
      title="Runs"
      note={
        <>
          {describeStatus(view.status)}, {describeOrder(view)}
          {total && (
            <>
              {' · '}
              <span data-testid="runs-total" data-estimated={total.estimated} title={totalTitle(total)}>
                {formatTotal(total)}
              </span>
            </>
          )}
          {runs.isFetching && <span className={styles.live} title="Refreshing" />}
        </>
      }
      aside={<ColumnsMenu columns={columns} summary={summary} runs={list} />}
    >
      <RunsFilters view={view} />
      {canMutate && <BulkBar selection={selection} runs={list} view={view} total={total} onReport={setReport} />}
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
          <RunsTable
            runs={list}
            selection={canMutate ? selection : undefined}
            columns={columns.shown}
            summary={summary.field}
            sort={{ sort: view.sort, order: view.order, onSort }}
          />
        </div>
      )}

      <div className={styles.pager}>
        {view.order === 'desc' ? (
          <Button small variant="ghost" onClick={() => go({ order: 'asc' })} data-testid="jump-oldest">
            Jump to {view.sort === 'created' ? 'oldest' : 'least recently changed'} ⇥
          </Button>
        ) : (
          <Button small variant="ghost" onClick={() => go({ order: 'desc' })} data-testid="jump-newest">
            ⇤ Back to {view.sort === 'created' ? 'newest' : 'last changed'}
          </Button>
        )}
        <span className={styles.pagerSpacer} />
        <Button small disabled={!view.cursor} onClick={() => navigate(runsHref({ ...view, cursor: '', page: 1 }))}>
          ⇤ First page
        </Button>
        <span className="muted" data-testid="page-info">
          Page {view.page} · {total ? `${list.length} of ${formatTotal(total)}` : `${list.length} run${list.length === 1 ? '' : 's'}`}
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
  if (status === 'all') return 'all statuses';
  return status.split(',').join(' or ');
}
