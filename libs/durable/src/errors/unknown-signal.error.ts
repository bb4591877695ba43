import { DurableError } from './durable.error';

/** The workflow declares its signals (or channels) and this name is not one of them. */
export class UnknownSignalError extends DurableError {
  readonly code = 'UNKNOWN_SIGNAL';
  constructor(workflow: string, kind: 'signal' | 'channel', name: string, declared: string[]) {
    super(`Workflow "${workflow}" declares no ${kind} named "${name}". Declared: ${declared.map((d) => `"${d}"`).join(', ') || 'none'}.`, {
      workflow,
      kind,
      name,
      declared,
    });
  }
}
