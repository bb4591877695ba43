import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from './client';
import { queryKeys } from './query-keys';
import type { WorkflowInfo } from './types';

export async function fetchWorkflows(signal?: AbortSignal): Promise<WorkflowInfo[]> {
  const { workflows } = await apiGet<{ workflows: WorkflowInfo[] }>('/workflows', undefined, signal);
  return workflows;
}

/** The registry changes only with a deploy: fetched once a minute at most. */
export function workflowsQueryOptions() {
  return queryOptions({
    queryKey: queryKeys.workflows,
    queryFn: ({ signal }) => fetchWorkflows(signal),
    staleTime: 60_000,
  });
}

export function useWorkflows() {
  return useQuery(workflowsQueryOptions());
}

/** One workflow's declaration, once the list is loaded; undefined when not registered here. */
export function useWorkflow(name: string | undefined): WorkflowInfo | undefined {
  return useQuery({
    ...workflowsQueryOptions(),
    select: (workflows) => workflows.find((w) => w.name === name),
  }).data;
}
