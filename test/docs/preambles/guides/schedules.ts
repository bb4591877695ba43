// What docs/guides/schedules.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { DurableWorkflow } from 'nestjs-durable';

export { Workflow } from 'nestjs-durable';
export type { DurableWorkflow, ScheduledInput, WorkflowContext } from 'nestjs-durable';
export { DurableTestingModule } from 'nestjs-durable/testing';

export declare class Report implements DurableWorkflow<unknown, void> {
  run(): Promise<void>;
}
