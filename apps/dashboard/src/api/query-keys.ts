import type { RunQuery } from './runs';
import type { RunFilter } from './types';

// The one place query keys are spelled. Mutations invalidate through these same keys:
// `runs.all` covers every list and every run detail; `schedules.all` every schedule. Live updates
// (api/live.ts) refresh `runs.lists`, the `runs.detail` of the runs that changed, and `stats`.
const root = ['durable'] as const;
const runsRoot = [...root, 'runs'] as const;
const schedulesRoot = [...root, 'schedules'] as const;

export const queryKeys = {
  session: (authEpoch: number) => [...root, 'session', authEpoch] as const,
  runs: {
    all: runsRoot,
    lists: [...runsRoot, 'list'] as const,
    list: (filter: RunQuery) => [...runsRoot, 'list', filter] as const,
    details: [...runsRoot, 'detail'] as const,
    detail: (runId: string) => [...runsRoot, 'detail', runId] as const,
  },
  /** A bulk action's targets, read when its dialog opens: outside `runs`, so nothing refreshes it under the operator's eyes. */
  bulkPreview: (filter: RunFilter) => [...root, 'bulk-preview', filter] as const,
  schedules: {
    all: schedulesRoot,
    list: [...schedulesRoot, 'list'] as const,
    detail: (name: string) => [...schedulesRoot, 'detail', name] as const,
  },
  workflows: [...root, 'workflows'] as const,
  stats: [...root, 'stats'] as const,
  queues: [...root, 'queues'] as const,
  journal: [...root, 'journal'] as const,
};
