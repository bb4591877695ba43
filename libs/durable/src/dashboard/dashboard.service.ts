import { Inject, Injectable, Logger } from '@nestjs/common';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import { InvalidArgumentError, RunNotFoundError } from '../errors';
import type { RunFilter, RunView } from '../interfaces';
import { DashboardRepository, HISTORY_PAGE, HistoryRow, STATS_EXACT_UP_TO } from '../persistence/dashboard.repository';
import { DASHBOARD_QUEUE_READS, DASHBOARD_RUN_READS } from './dashboard-reads';
import { RunRepository } from '../persistence/run.repository';
import { QueueRepository } from '../persistence/queue.repository';
import { QueueReasons } from '../client/queue-reasons';
import { deserialize } from '../schema/serializer';
import { jsonSchemaOf } from '../schema/payload-validator';
import { toDisplay } from './display';
import { errorReply } from './dashboard-errors.filter';
import { LEGACY_DAY } from '../persistence/journal-partitions';

const BULK_LIMIT = 1_000;
const BULK_CONCURRENCY = 8;

/** What the run list filters on: the client's filter, a run-id prefix, and the awaited signal or channel name. */
const ACTIVITY_RANGES = {
  '1h': { rangeMs: 3_600_000, bucketMs: 60_000 },
  '24h': { rangeMs: 86_400_000, bucketMs: 900_000 },
} as const;

export type ListFilter = RunFilter & { q?: string; waitingName?: string };

/** A bulk action's targets, validated by its endpoint's schema: run ids, or a filter. */
export interface BulkTarget {
  runIds?: string[];
  filter?: Omit<ListFilter, 'q' | 'limit' | 'cursor'>;
}

export interface BulkOutcome {
  runId: string;
  /** `unchanged`: a resume that found nothing to end (the run on its way already, or a delayed start past its deadline). */
  outcome: 'accepted' | 'duplicate' | 'unchanged' | 'refused';
  code?: string;
  message?: string;
}

/** How long one stats read answers every request of this instance. */
const STATS_SHARED_MS = 1_000;

type StatsAnswer = Awaited<ReturnType<DashboardService['readStats']>>;

/** Shapes runs, journals, workflows and stats as the REST API answers them (docs/rest-api.md). */
@Injectable()
export class DashboardService {
  private readonly logger = new Logger('DurableDashboard');
  private statsRead?: { at: number; answer: Promise<StatsAnswer> };
  /** Why a listed pending run of a queue waits, read where the list was. */
  private readonly queueReasons: QueueReasons;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly registry: WorkflowRegistry,
    private readonly runs: RunRepository,
    /** The runs as lists and run pages read them: from the read replica when there is one. */
    @Inject(DASHBOARD_RUN_READS) private readonly reads: RunRepository,
    private readonly dashboard: DashboardRepository,
    /** The queues' views and reasons: from the read replica when there is one. */
    @Inject(DASHBOARD_QUEUE_READS) private readonly queues: QueueRepository,
  ) {
    this.queueReasons = new QueueReasons(options, queues);
  }

  runJson(run: RunView): Record<string, unknown> {
    return {
      ...(toDisplay({ ...run, input: undefined, output: undefined }) as object),
      input: toDisplay(run.input),
      ...(run.output !== undefined && { output: toDisplay(run.output) }),
      maxAttempts: this.registry.find(run.workflow)?.retry.maxAttempts,
    };
  }

  /**
   * GET /queues: each declared queue's limits, load, backlog by cause, deepest partitions and rate window;
   * and the queues this instance does not declare that hold pending runs (stranded by a deploy).
   */
  async queueViews() {
    const declared = [...this.options.queues.values()];
    return {
      queues: await this.queues.views(declared),
      undeclared: await this.queues.undeclaredBacklogs(declared.map((q) => q.name)),
    };
  }

  /**
   * GET /journal: the journal by day, newest first, each with its size, the runs of it left, and what
   * retention does with it: `ahead` (made in advance), `recent` (today or yesterday: never dropped),
   * `held` (runs of it are left), or `drops` (none is: the next cleanup drops it, or would with
   * retention on).
   */
  async journalDays() {
    const { today, standingBytes, days } = await this.dashboard.journalDays(STATS_EXACT_UP_TO);
    const yesterday = new Date(Date.parse(`${today}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);
    const state = (day: string, runs: number) => (day > today ? 'ahead' : runs > 0 ? 'held' : day >= yesterday ? 'recent' : 'drops');
    return {
      today,
      retention: Boolean(this.options.retention),
      standingBytes,
      days: days.reverse().map(({ day, runs, bytes }) => ({
        day,
        legacy: day === LEGACY_DAY,
        bytes,
        runs: { count: runs, atLeast: runs >= STATS_EXACT_UP_TO },
        state: state(day, runs),
      })),
    };
  }

  /** The overview's charts: runs started, completed, failed and parked per bucket over the last hour (1 min) or day (15 min). */
  async activity(range: '1h' | '24h') {
    const { rangeMs, bucketMs } = ACTIVITY_RANGES[range];
    const buckets = await this.dashboard.activity(rangeMs, bucketMs);
    return { range, bucketMs, buckets: buckets.map((b) => ({ ...b, at: b.at.toISOString() })) };
  }

  /** A page of runs, and how many match the filter in all (exact up to 10,000, then the planner's estimate). */
  async list(filter: ListFilter) {
    const [page, total] = await Promise.all([this.reads.list(filter), this.reads.count(filter, STATS_EXACT_UP_TO)]);
    await this.queueReasons.annotate(page.runs);
    return { runs: page.runs.map((r) => this.runJson(r)), ...(page.nextCursor && { nextCursor: page.nextCursor }), total };
  }

  async detail(runId: string) {
    const run = await this.reads.get(runId);
    if (!run) throw new RunNotFoundError(runId);
    await this.queueReasons.annotate([run], { position: true });
    const rows = await this.dashboard.journal(runId);
    const workflow = this.registry.find(run.workflow);
    const delivered = new Set(rows.signals.map((s) => s.name));
    const awaited = awaitedSignals(run.waiting);
    const declared = [...(workflow?.signals?.values() ?? [])]
      .filter((s) => !delivered.has(s.name))
      .map((s) => ({
        name: s.name,
        awaited: awaited.includes(s.name),
        ...(jsonSchemaOf(s.schema) && { jsonSchema: jsonSchemaOf(s.schema) }),
      }));
    const undeclared = awaited.filter((name) => !delivered.has(name) && !declared.some((d) => d.name === name));
    // The awaited first (a select's signal arms in their order), then the other declared ones.
    const pending = [
      ...undeclared.map((name) => ({ name, awaited: true })),
      ...declared.filter((d) => d.awaited),
      ...declared.filter((d) => !d.awaited),
    ];
    return {
      run: this.runJson(run),
      steps: rows.steps.map((s) => ({
        key: s.key,
        kind: s.kind,
        outcome: s.outcome,
        ...(s.outcome === 'ok' && { result: toDisplay(deserialize(s.result)) }),
        ...(s.error && { error: { name: s.error.name, message: s.error.message, ...(s.error.stack && { stack: s.error.stack }) } }),
        ...(s.started_at && {
          startedAt: iso(s.started_at),
          durationMs: Date.parse(String(s.finished_at)) - Date.parse(String(s.started_at)),
        }),
        finishedAt: iso(s.finished_at),
      })),
      signals: rows.signals.map((s) => ({
        name: s.name,
        payload: toDisplay(deserialize(s.payload)),
        deliveredAt: iso(s.delivered_at),
        source: s.source,
      })),
      pendingSignals: pending,
      messages: rows.messages.map((m) => ({
        channel: m.channel,
        key: m.key,
        seq: Number(m.seq),
        payload: toDisplay(deserialize(m.payload)),
        sentAt: iso(m.sent_at),
        ackedAt: m.acked_at ? iso(m.acked_at) : null,
      })),
      children: rows.children.map((c) => ({
        runId: c.id,
        workflow: c.workflow,
        status: c.status,
        step: c.parent_step,
        reusedFrom: c.reused_from,
        ...(c.detached ? { detached: true as const } : {}),
      })),
      parent: rows.parent ? { runId: rows.parent.id, workflow: rows.parent.workflow, status: rows.parent.status } : null,
      forks: rows.forks,
      ...historyPage(rows.history, HISTORY_PAGE),
    };
  }

  /** The history of a run before the row `before` (an id from an earlier answer): an earlier page than the detail's. */
  async history(runId: string, before: string, limit = HISTORY_PAGE) {
    if (!(await this.reads.get(runId))) throw new RunNotFoundError(runId);
    return historyPage(await this.dashboard.historyBefore(runId, before, limit), limit);
  }

  workflows() {
    const describe = (list?: Map<string, { name: string; schema?: unknown }>) =>
      list
        ? [...list.values()].map((d) => ({
            name: d.name,
            ...(jsonSchemaOf(d.schema as never) && { jsonSchema: jsonSchemaOf(d.schema as never) }),
          }))
        : null;
    return {
      workflows: this.registry.all().map((w) => ({
        name: w.name,
        retry: { maxAttempts: w.retry.maxAttempts },
        // What a start without its own options gets: the queue it waits in, the deadline it runs under.
        queue: w.queue,
        timeoutMs: w.timeoutMs ?? null,
        deadlineGraceMs: w.deadlineGraceMs,
        signals: describe(w.signals),
        channels: describe(w.channels),
      })),
    };
  }

  /**
   * The overview's figures. One read serves every request for `STATS_SHARED_MS` (every open tab polls
   * every 2 s; one query per second answers them all), and a failed read is not kept.
   */
  stats(): Promise<StatsAnswer> {
    const now = Date.now();
    if (!this.statsRead || now - this.statsRead.at >= STATS_SHARED_MS) {
      const answer = this.readStats();
      const read = { at: now, answer };
      answer.catch(() => this.statsRead === read && (this.statsRead = undefined));
      this.statsRead = read;
    }
    return this.statsRead.answer;
  }

  private async readStats() {
    const sweep = this.options.sweeper ? this.options.sweeper.intervalMs : 1_000;
    const stats = await this.dashboard.stats(sweep, this.options.leaseMs);
    return {
      byStatus: stats.byStatus,
      waitingByKind: stats.waitingByKind,
      oldestWaiting: stats.oldestWaiting && {
        runId: stats.oldestWaiting.id,
        workflow: stats.oldestWaiting.workflow,
        since: stats.oldestWaiting.wait.since,
        waiting: stats.oldestWaiting.wait,
      },
      overdue: { count: stats.overdue.count, oldestDueAt: stats.overdue.oldestDueAt && iso(stats.overdue.oldestDueAt) },
      estimated: stats.estimated,
      instances: stats.instances.map((i) => ({
        id: i.id,
        startedAt: iso(i.started_at),
        heartbeatAt: iso(i.heartbeat_at),
        lastSweepAt: i.last_sweep_at && iso(i.last_sweep_at),
        alive: i.alive,
        leases: Number(i.leases),
        detail: i.detail,
      })),
      lastSweepAt: stats.lastSweepAt && iso(stats.lastSweepAt),
      now: iso(stats.now),
    };
  }

  /**
   * The runs a bulk action targets: given ids, or a filter's matches, at most 1,000 either way. A filter
   * matching more is refused whole (nothing is acted on), never cut to its newest 1,000.
   */
  async targets(target: BulkTarget): Promise<string[]> {
    if (target.runIds) return [...new Set(target.runIds)];
    const { runs } = await this.runs.list({ ...target.filter, limit: BULK_LIMIT + 1 }, BULK_LIMIT + 1);
    if (runs.length > BULK_LIMIT)
      throw new InvalidArgumentError(
        `The filter matches more than ${BULK_LIMIT} runs; narrow it (a status, a workflow, a time range) and act again.`,
      );
    return runs.map((r) => r.runId);
  }

  /**
   * Applies `action` to each run, a few at a time, and reports each run's outcome on its own: any error
   * refuses its run only (with its code, INTERNAL for one not the library's, logged), so the answer
   * says what was done. One rethrown failed the request while the other lanes went on acting. The
   * server errors are logged once per error (its name and message) with the runs they refused: an
   * outage refuses every run with one error, which is one stack trace, not a thousand.
   */
  async bulk(
    runIds: string[],
    action: (runId: string) => Promise<Exclude<BulkOutcome['outcome'], 'refused'>>,
  ): Promise<{ results: BulkOutcome[] }> {
    const results: BulkOutcome[] = new Array(runIds.length);
    const failures = new Map<string, { error: unknown; at: number[] }>();
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < runIds.length; i = next++) {
        try {
          results[i] = { runId: runIds[i], outcome: await action(runIds[i]) };
        } catch (error) {
          const { status, body } = errorReply(error);
          if (status >= 500) {
            const said = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
            const failure = failures.get(said) ?? { error, at: [] };
            failures.set(said, failure);
            failure.at.push(i);
          }
          results[i] = { runId: runIds[i], outcome: 'refused', code: body.code, message: body.message };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(BULK_CONCURRENCY, runIds.length) }, lane));
    for (const [said, { error, at }] of failures) {
      const refused = at.sort((a, b) => a - b).map((i) => runIds[i]); // in the request's order
      const named = refused.slice(0, 10).join(', ') + (refused.length > 10 ? ` and ${refused.length - 10} more` : '');
      this.logger.error(`Bulk action failed on ${refused.length} run(s) (${named}): ${said}`, (error as Error)?.stack);
    }
    return { results };
  }
}

/** The signals a run waits for: the one of `waitForSignal`, or a select's signal arms. */
function awaitedSignals(waiting: RunView['waiting']): string[] {
  if (waiting?.kind === 'signal') return [waiting.name];
  if (waiting?.kind === 'select') return waiting.arms.flatMap((arm) => (arm.kind === 'signal' && arm.name ? [arm.name] : []));
  return [];
}

function iso(value: Date | string): string {
  return new Date(value).toISOString();
}

/** Rows read one past `limit` (oldest first) as a page: the extra, oldest row only says there are earlier ones. */
function historyPage(rows: HistoryRow[], limit: number) {
  const historyMore = rows.length > limit;
  return {
    history: (historyMore ? rows.slice(1) : rows).map((h) => ({
      id: String(h.id),
      at: iso(h.at),
      event: h.event,
      actor: h.actor,
      detail: h.detail,
    })),
    historyMore,
  };
}
