/** What the harness asks a sender process on its stdin, and what it answers on stdout, one JSON line each. */
export type SenderRequest =
  | { id: number; op: 'start'; runId: string; input: unknown; tx?: TxMode; queue?: string }
  | { id: number; op: 'signal'; runId: string; name: string; payload: unknown; tx?: TxMode; txKey?: string }
  | { id: number; op: 'send'; runId: string; channel: string; key: string; payload: unknown }
  | { id: number; op: 'operator'; action: OperatorAction; via: 'client' | 'rest' | 'bulk'; runIds: string[] };

/** With `{ manager }` inside an application transaction that writes a business row, then commits or rolls back on purpose. */
export type TxMode = 'commit' | 'rollback';

export type OperatorAction = 'cancel' | 'resume' | 'retry';

/** One run's answer to an operator action (a bulk action answers per run). */
export interface OperatorOutcome {
  runId: string;
  outcome: 'accepted' | 'refused';
  /** Why it was refused: the library error's name (from the REST API: the error class its `code` stands for). */
  error?: { name: string; message: string };
}

export type SenderReply =
  | { id: number; ok: true; accepted: boolean; seq?: number; rolledBack?: boolean; results?: OperatorOutcome[] }
  | { id: number; ok: false; error: { name: string; message: string } };

export const REPLY_PREFIX = 'reply ';
