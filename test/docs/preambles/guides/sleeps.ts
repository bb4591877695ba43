// What docs/guides/sleeps.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { WorkflowClient, WorkflowContext } from 'nestjs-durable';

export declare const ctx: WorkflowContext;
export declare const input: { userId: string };
export declare const workflows: WorkflowClient;
export declare const runId: string;

export declare class Mailer {
  sendReminder(userId: string): Promise<void>;
  sendTrialEnded(userId: string): Promise<void>;
}
export declare class DigestService {
  send(userId: string, day: number): Promise<void>;
}
