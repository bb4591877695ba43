// What README.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { SignalService, WorkflowClient } from 'nestjs-durable';

export declare const workflows: WorkflowClient;
export declare const signals: SignalService;
