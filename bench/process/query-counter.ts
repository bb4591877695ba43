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
    const statements = typeof args[0] === 'string' && TOGETHER.test(args[0]) ? togetherTexts(args[0]) : [statementText(args[0])];
    for (const text of statements) counts.set(text, (counts.get(text) ?? 0) + 1);
    return original.apply(this, args);
  };
}

/** A group commit's batch of several kinds (DurableDatabase.together): PREPAREs and EXECUTEs in one simple query. */
const TOGETHER = /^(PREPARE|EXECUTE) durable_together_/;
/** The statement text of each name a together query prepared, so its EXECUTEs count under the statement's own text. */
const preparedTexts = new Map<string, string>();

/** Each statement of a together query: a PREPARE counts as one, an EXECUTE as its statement. */
function togetherTexts(query: string): string[] {
  return query.split(';\n').map((part) => {
    const [, verb, name, sql] = /^(PREPARE|EXECUTE) (\S+?)(?: AS ([\s\S]*)|\()/.exec(part) ?? [];
    if (verb === 'PREPARE') {
      preparedTexts.set(name, statementText(sql));
      return `PREPARE ${name}`;
    }
    return preparedTexts.get(name) ?? `EXECUTE ${name}`;
  });
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
