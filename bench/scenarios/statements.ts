import type { BenchContext } from '../context';
import { statementCalls, transactionCounters } from '../database';
import { delay } from '../measure';
import { round } from '../stats';
import { System, SYSTEMS } from './throughput';

export interface PerWorkflow {
  runs: number;
  /** Commits in the system's database (pg_stat_database.xact_commit), reads included. */
  commits: number;
  /** Transaction ids assigned on the server: transactions that wrote. */
  writeTransactions: number;
  /** Statements the process sent (pg's Client.query), BEGIN and COMMIT included. */
  statements: number;
  /** The same from pg_stat_statements, where it is loaded. */
  serverStatements?: number;
  /** Each statement's calls per workflow, most frequent first. */
  breakdown: Array<{ statement: string; perRun: number }>;
}
export type StatementFigures = { source: string } & Partial<Record<System, PerWorkflow>>;

interface Session {
  elapsedMs: number;
  commits: number;
  xids: number;
  clientCounts: Record<string, number>;
  serverCalls: number;
}

/**
 * What one 3-step workflow costs the database, on a quiet server: N workflows one after another in a
 * fresh process, minus an idle session of the same length and shape (same boot, warm-up and close),
 * so boot, background sweeps and lease renewals cancel out. The process is closed before the
 * counters are read: a backend flushes its statistics when it exits.
 */
export async function measureStatements(ctx: BenchContext): Promise<StatementFigures> {
  const figures: StatementFigures = {
    source: ctx.server.statStatements
      ? 'pg_stat_statements and pg_stat_database'
      : 'pg_stat_database (pg_stat_statements is not preloaded) and the client-side count',
  };
  for (const kind of SYSTEMS) {
    await ctx.attempt(`statements.${kind}`, async () => {
      const runs = ctx.plan.statementRuns;
      const busy = await session(ctx, kind, runs);
      const idle = await session(ctx, kind, 0, busy.elapsedMs);
      const per = (busyValue: number, idleValue: number) => round((busyValue - idleValue) / runs, 2);
      const breakdown = Object.entries(busy.clientCounts)
        .map(([statement, calls]) => ({ statement, perRun: per(calls, idle.clientCounts[statement] ?? 0) }))
        .filter((s) => s.perRun >= 0.01)
        .sort((a, b) => b.perRun - a.perRun);
      const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
      figures[kind] = {
        runs,
        commits: per(busy.commits, idle.commits),
        writeTransactions: per(busy.xids, idle.xids),
        statements: per(total(busy.clientCounts), total(idle.clientCounts)),
        ...(ctx.server.statStatements ? { serverStatements: per(busy.serverCalls, idle.serverCalls) } : {}),
        breakdown,
      };
      ctx.log(
        `  ${kind}: ${figures[kind]!.commits} commits, ${figures[kind]!.writeTransactions} write transactions, ${figures[kind]!.statements} statements per workflow`,
      );
    });
  }
  return figures;
}

async function session(ctx: BenchContext, kind: System, runs: number, idleMs = 0): Promise<Session> {
  const database = ctx.database(kind);
  const peer = await ctx.spawn({ kind, concurrency: ctx.plan.workerConcurrency });
  try {
    await peer.call('loop', { concurrency: 1, count: 10 });
    await delay(300);
    const before = await transactionCounters(ctx.server, database);
    const callsBefore = await statementCalls(ctx.server, database);
    await peer.call('queryCounts', { reset: true });
    const started = Date.now();
    if (runs) await peer.call('loop', { concurrency: 1, count: runs });
    else await delay(idleMs);
    const elapsedMs = Date.now() - started;
    const clientCounts = await peer.call('queryCounts', { reset: true });
    await peer.close();
    await delay(500); // the exiting backends flush their statistics
    const after = await transactionCounters(ctx.server, database);
    const callsAfter = await statementCalls(ctx.server, database);
    let serverCalls = 0;
    for (const [id, { calls, query }] of callsAfter) {
      if (!/pg_stat_statements|pg_stat_database/.test(query)) serverCalls += calls - (callsBefore.get(id)?.calls ?? 0);
    }
    return { elapsedMs, commits: after.commits - before.commits, xids: after.xids - before.xids, clientCounts, serverCalls };
  } finally {
    await peer.close();
  }
}
