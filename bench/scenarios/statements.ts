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
  /** WAL the server wrote (the whole server's, which is quiet but for this system). */
  walBytes: number;
  /** Each statement's calls per workflow, most frequent first. */
  breakdown: Array<{ statement: string; perRun: number }>;
  /** The same costs with 64 workflows at once (group commit at work), where measured. */
  concurrent?: Omit<PerWorkflow, 'breakdown' | 'concurrent'> & { concurrency: number };
}
export type StatementFigures = { source: string } & Partial<Record<System, PerWorkflow>>;

interface Session {
  elapsedMs: number;
  commits: number;
  xids: number;
  walBytes: number;
  clientCounts: Record<string, number>;
  serverCalls: number;
}

/**
 * What one 3-step workflow costs the database, on a quiet server: N workflows in a fresh process, one
 * after another and then 64 at a time, minus an idle session of the same length and shape (same boot,
 * warm-up and close), so boot, background sweeps and lease renewals cancel out. The process is closed
 * before the counters are read: a backend flushes its statistics when it exits.
 */
export async function measureStatements(ctx: BenchContext): Promise<StatementFigures> {
  const figures: StatementFigures = {
    source: ctx.server.statStatements
      ? 'pg_stat_statements and pg_stat_database'
      : 'pg_stat_database (pg_stat_statements is not preloaded) and the client-side count',
  };
  for (const kind of SYSTEMS) {
    await ctx.attempt(`statements.${kind}`, async () => {
      const { breakdown, ...alone } = await costs(ctx, kind, ctx.plan.statementRuns, 1);
      const { breakdown: _, ...concurrent } = await costs(ctx, kind, ctx.plan.statementRuns * 4, CONCURRENT);
      figures[kind] = { ...alone, breakdown, concurrent: { ...concurrent, concurrency: CONCURRENT } };
      for (const [label, f] of [
        ['c1', alone],
        [`c${CONCURRENT}`, concurrent],
      ] as const) {
        ctx.log(
          `  ${kind} ${label}: ${f.commits} commits, ${f.writeTransactions} write transactions, ${f.statements} statements, ${f.walBytes} WAL bytes per workflow`,
        );
      }
    });
  }
  return figures;
}

const CONCURRENT = 64;

/** The costs of `runs` workflows, `concurrency` at a time, less those of an idle session as long. */
async function costs(ctx: BenchContext, kind: System, runs: number, concurrency: number): Promise<Omit<PerWorkflow, 'concurrent'>> {
  const busy = await session(ctx, kind, runs, concurrency);
  const idle = await session(ctx, kind, 0, concurrency, busy.elapsedMs);
  const per = (busyValue: number, idleValue: number) => round((busyValue - idleValue) / runs, 2);
  const total = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    runs,
    commits: per(busy.commits, idle.commits),
    writeTransactions: per(busy.xids, idle.xids),
    statements: per(total(busy.clientCounts), total(idle.clientCounts)),
    ...(ctx.server.statStatements ? { serverStatements: per(busy.serverCalls, idle.serverCalls) } : {}),
    walBytes: Math.round((busy.walBytes - idle.walBytes) / runs),
    breakdown: Object.entries(busy.clientCounts)
      .map(([statement, calls]) => ({ statement, perRun: per(calls, idle.clientCounts[statement] ?? 0) }))
      .filter((s) => s.perRun >= 0.01)
      .sort((a, b) => b.perRun - a.perRun),
  };
}

async function session(ctx: BenchContext, kind: System, runs: number, concurrency: number, idleMs = 0): Promise<Session> {
  const database = ctx.database(kind);
  const peer = await ctx.spawn({ kind, concurrency: ctx.plan.workerConcurrency });
  try {
    await peer.call('loop', { concurrency: 1, count: 10 });
    await delay(300);
    const before = await transactionCounters(ctx.server, database);
    const callsBefore = await statementCalls(ctx.server, database);
    await peer.call('queryCounts', { reset: true });
    const started = Date.now();
    if (runs) await peer.call('loop', { concurrency, count: runs });
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
    return {
      elapsedMs,
      commits: after.commits - before.commits,
      xids: after.xids - before.xids,
      walBytes: after.walBytes - before.walBytes,
      clientCounts,
      serverCalls,
    };
  } finally {
    await peer.close();
  }
}
