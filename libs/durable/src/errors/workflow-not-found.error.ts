import { DurableError } from './durable.error';

/** No workflow of this name is registered in this application. */
export class WorkflowNotFoundError extends DurableError {
  readonly code = 'WORKFLOW_NOT_FOUND';
  constructor(
    readonly workflow: string,
    registered: string[],
  ) {
    super(
      `No workflow named "${workflow.length > 200 ? `${workflow.slice(0, 200)}…` : workflow}" is registered. ` +
        `Registered: ${registered.map((r) => `"${r}"`).join(', ') || 'none'}. ` +
        'List the @Workflow class in the providers of a module of this application.',
      { registered },
    );
  }
}
