/** What the harness asks a sender process on its stdin, and what it answers on stdout, one JSON line each. */
export type SenderRequest =
  | { id: number; op: 'start'; runId: string; input: unknown }
  | { id: number; op: 'signal'; runId: string; name: string; payload: unknown }
  | { id: number; op: 'send'; runId: string; channel: string; key: string; payload: unknown };

export type SenderReply =
  | { id: number; ok: true; accepted: boolean; seq?: number }
  | { id: number; ok: false; error: { name: string; message: string } };

export const REPLY_PREFIX = 'reply ';
