import { useMutation } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { apiGet, runPath } from './client';
import type { HistoryEntry, HistoryPage } from './types';

/** Earlier pages of one run's history, and whether there are more before them. */
interface Kept {
  runId: string;
  rows: HistoryEntry[];
  more: boolean;
}

/**
 * A run's history: the newest page, which the run's detail carries and live updates refresh, and
 * earlier pages loaded on demand. Once an earlier page is loaded, rows that slide out of the newest
 * page as new events arrive are kept, so no gap opens between the two.
 */
export function useRunHistory(runId: string, newest: HistoryEntry[], newestMore: boolean) {
  const [kept, setKept] = useState<Kept | null>(null);
  const own = kept?.runId === runId ? kept : null;
  useEffect(() => {
    setKept((k) => (k?.runId === runId ? { ...k, rows: mergeById(k.rows, newest) } : k));
  }, [runId, newest]);
  const rows = useMemo(() => (own ? mergeById(own.rows, newest) : newest), [own, newest]);
  // The rows shown when the page was asked for go with it: the newest page may have moved on meanwhile.
  const earlier = useMutation({
    mutationFn: ({ shown }: { shown: HistoryEntry[] }) => apiGet<HistoryPage>(`${runPath(runId)}/history`, { before: shown[0].id }),
    onSuccess: (page, { shown }) =>
      setKept((k) => ({ runId, rows: mergeById(page.history, shown, k?.runId === runId ? k.rows : []), more: page.historyMore })),
  });
  return {
    rows,
    more: own ? own.more : newestMore,
    loadEarlier: () => rows.length > 0 && earlier.mutate({ shown: rows }),
    loading: earlier.isPending,
    error: earlier.error,
  };
}

/** Rows of several pages as one list, oldest first: ids are the history's own, growing with time. */
function mergeById(...pages: HistoryEntry[][]): HistoryEntry[] {
  const byId = new Map(pages.flat().map((row) => [row.id, row]));
  // Decimal ids without leading zeros: the shorter is the smaller, else they compare as text.
  return [...byId.values()].sort((a, b) => a.id.length - b.id.length || (a.id < b.id ? -1 : 1));
}
