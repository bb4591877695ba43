import type { RunFilter } from './types';

// The one place query keys are spelled. Mutations invalidate through these same keys:
// `runs.all` covers every list and every run detail; `schedules.all` every schedule.
const root = ['durable'] as const;
const runsRoot = [...root, 'runs'] as const;
const schedulesRoot = [...root, 'schedules'] as const;

export const queryKeys = {
  session: (authEpoch: number) => [...root, 'session', authEpoch] as const,
  runs: {
    all: runsRoot,
    list: (filter: RunFilter) => [...runsRoot, 'list', filter] as const,
    detail: (runId: string) => [...runsRoot, 'detail', runId] as const,
  },
  schedules: {
    all: schedulesRoot,
    list: [...schedulesRoot, 'list'] as const,
    detail: (name: string) => [...schedulesRoot, 'detail', name] as const,
  },
  workflows: [...root, 'workflows'] as const,
  stats: [...root, 'stats'] as const,
  queues: [...root, 'queues'] as const,
};
