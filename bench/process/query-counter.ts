import { Client } from 'pg';

/**
 * Counts every statement this process sends, by text, at the one place all three systems pass
 * through: pg's Client.query (TypeORM, DBOS and the floor all use the `pg` driver). This is the
 * statement count where pg_stat_statements is not loaded, and the per-statement breakdown always.
 */
const counts = new Map<string, number>();
/** Normalized text by original text: the SQL strings are few and long, and normalizing each call would cost the peer CPU. */
const normalized = new Map<string, string>();

export function countQueries(): void {
  const proto = Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function countedQuery(this: unknown, ...args: unknown[]) {
    const text = statementText(args[0]);
    counts.set(text, (counts.get(text) ?? 0) + 1);
    return original.apply(this, args);
  };
}

/** The counts since the last reset, by statement (whitespace collapsed, cut at 160 characters). */
export function queryCounts(reset: boolean): Record<string, number> {
  const snapshot = Object.fromEntries(counts);
  if (reset) counts.clear();
  return snapshot;
}

function statementText(query: unknown): string {
  const text = typeof query === 'string' ? query : (query as { text?: unknown } | null)?.text;
  if (typeof text !== 'string') return '(other)';
  let short = normalized.get(text);
  if (short === undefined) {
    short = text.replace(/\s+/g, ' ').trim().slice(0, 160);
    if (normalized.size < 10_000) normalized.set(text, short);
  }
  return short;
}
