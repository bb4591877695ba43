// The benchmark suite: `npm run bench` (full, writes docs/benchmarks.md) or `npm run bench -- --quick` (a smoke).
// Flags: --quick, --embedded (own Postgres cluster with pg_stat_statements), --only=<sections> (comma-separated, of
// ceiling, throughput, latency, statements, signals, sleeps, fanOut, scale, schedules, queues, processes, retention),
// --report=bench/results/<date>.json (no measuring: re-derive the targets and rewrite the docs from a results file).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { BenchContext } from './context';
import { DATABASES, openServer, recreateDatabases, serverSettings, vacuumDatabases } from './database';
import { machine, versions } from './environment';
import { planFor } from './plan';
import { benchmarksMarkdown } from './report/markdown';
import { BenchResults, medians, writeJson } from './report/results';
import { groupedBars } from './report/svg';
import { checkTargets } from './report/targets';
import { measureFanOut } from './scenarios/fan-out';
import { measureLatency } from './scenarios/latency';
import { measureScale } from './scenarios/scale';
import { measureSchedules } from './scenarios/schedules';
import { measureQueues } from './scenarios/queues';
import { measureProcesses } from './scenarios/processes';
import { measureRetention } from './scenarios/retention';
import { measureSignals } from './scenarios/signals';
import { measureSleeps } from './scenarios/sleeps';
import { measureStatements } from './scenarios/statements';
import { measureCeiling, measureThroughput } from './scenarios/throughput';

const ROOT = resolve(__dirname, '../..');
const CHART = 'images/benchmarks-throughput.svg';

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const report = args.find((a) => a.startsWith('--report='))?.slice('--report='.length);
  if (report) {
    const stored = JSON.parse(readFileSync(resolve(report), 'utf8')) as BenchResults;
    if (stored.quick) throw new Error(`${report} holds quick results; only a full run is published to docs/`);
    const results = { ...stored, targets: checkTargets(stored) };
    writeJson(resolve(report), results);
    publish(results, resolve(report));
    return 0;
  }
  const quick = args.includes('--quick');
  const only = args
    .find((a) => a.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',');
  const wanted = (name: string) => !only || only.includes(name);
  const plan = planFor(quick);
  const started = Date.now();
  const loads = [loadavg()[0]];
  const measured = versions(); // the tree as built: edits made while the run goes on are not what it measures

  const server = await openServer({ embedded: args.includes('--embedded') });
  const ctx = new BenchContext(plan, server);
  try {
    ctx.log(
      `${quick ? 'quick' : 'full'} run on ${server.source} Postgres (pg_stat_statements ${server.statStatements ? 'loaded' : 'not loaded'})`,
    );
    await recreateDatabases(server);
    const pg = await serverSettings(server);

    const section = async <T>(name: string, fn: () => Promise<T>, empty: T): Promise<T> => {
      if (!wanted(name)) return empty;
      await vacuumDatabases(server);
      loads.push(loadavg()[0]);
      ctx.log(`${name}… (load average ${loads[loads.length - 1].toFixed(2)})`);
      const t0 = Date.now();
      const result = await fn();
      ctx.log(`${name} done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
      return result;
    };
    const ceiling = await section('ceiling', () => measureCeiling(ctx), {});
    const { rates: throughput, dbosPools } = await section('throughput', () => measureThroughput(ctx), { rates: {} });
    const latency = await section('latency', () => measureLatency(ctx), { fresh: {}, warm: {} });
    const statements = await section('statements', () => measureStatements(ctx), { source: 'not measured' });
    const signals = await section('signals', () => measureSignals(ctx), { inProcess: {}, crossInstance: {} });
    const sleeps = await section('sleeps', () => measureSleeps(ctx), {
      inline: { sleepMs: plan.inlineSleepMs, inlineWaitMs: 2_000, runs: 0, figures: {} },
      parked: { sleepMs: plan.parkedSleepMs, inlineWaitMs: plan.parkedInlineWaitMs, runs: 0, figures: {} },
    });
    const fanOut = await section('fanOut', () => measureFanOut(ctx), { children: plan.fanOutChildren });
    const scale = await section('scale', () => measureScale(ctx), {});
    const schedules = await section('schedules', () => measureSchedules(ctx), {});
    const queues = await section('queues', () => measureQueues(ctx), {});
    const processes = await section('processes', () => measureProcesses(ctx), undefined);
    const retention = await section('retention', () => measureRetention(ctx), undefined);

    const date = new Date().toLocaleDateString('sv-SE'); // YYYY-MM-DD, local
    const partial: Omit<BenchResults, 'targets'> = {
      date,
      quick,
      durationMinutes: (Date.now() - started) / 60_000,
      machine: machine(loads),
      versions: measured,
      postgres: { source: server.source, ...pg, pgStatStatements: server.statStatements },
      method: {
        'one server': `each system has its own database on the same Postgres (${Object.values(DATABASES).join(', ')}), dropped and created at the start of the run`,
        'one process per system':
          'each system runs in a child process of its own (node fork), one system at a time; the workflows are started and awaited inside that process, and every timestamp is taken there, so the parent (which only orchestrates) never sits inside a measured interval',
        'same conditions': `nestjs-durable with worker concurrency ${plan.workerConcurrency} (its pool: ${plan.workerConcurrency + 5} connections) and its defaults otherwise (inlineWaitMs 2000, sweeper 1000 ms, leaseMs 30000); DBOS in the throughput section twice, with its default pool and with a pool of ${plan.workerConcurrency + 5} like ours, compared at its better figure at each concurrency (both are on the page), and with its default pool elsewhere; the floor with a pool of ${plan.workerConcurrency + 5}`,
        DBOS: 'DBOS.registerWorkflow with three DBOS.runStep calls, started with DBOS.startWorkflow and awaited with getResult, after DBOS.launch on its own system database; signals are DBOS.send / DBOS.recv, sleeps DBOS.sleep, fan-out DBOS.startWorkflow inside a workflow; logLevel error; its queue (registerQueue with the same concurrency as ours) only in the queues section',
        vacuum: `autovacuum is ${pg.settings.autovacuum} on this server; before each section the bench runs VACUUM ANALYZE in the three databases, and before each round of a section in the database of the system it measures, as autovacuum would have by then, so no section or round pays for the dead rows and stale statistics left by the one before (all systems alike)`,
        floor:
          'raw pg, five statements per 3-step workflow, each its own commit: insert the run, three checkpoint inserts, one update to end it',
        'measuring loop': `closed loop: c callers, each starting a workflow and awaiting its result before starting the next; one warm-up of ${plan.warmupMs} ms, then ${plan.throughputReps} repetitions of ${plan.throughputMs} ms per concurrency level`,
        repetitions: `${plan.reps} measured repetitions (after a warm-up) for the other figures; latency ${plan.latencySamples} workflows after ${Math.ceil(plan.latencySamples / 3)} and again after ${plan.latencyWarmMs / 1000} s more of them, signals ${plan.signalSamples} round trips, sleeps ${plan.sleepRuns} runs per repetition`,
      },
      plan,
      throughput: medians(throughput),
      throughputSpread: throughput,
      stepsPerSecond: medians(throughput, 3),
      dbosPools,
      postgresCeiling: { singleRowInsertsPerSecond: ceiling },
      latencyMs: latency.fresh,
      latencyWarmMs: latency.warm,
      signalRoundTripMs: signals,
      sleepLatenessMs: sleeps,
      perWorkflow: statements,
      scale,
      schedules,
      queues,
      processes,
      retention,
      fanOut,
      errors: ctx.errors,
    };
    const results: BenchResults = { ...partial, targets: checkTargets(partial) };

    const name = only ? `partial-${date}` : quick ? `quick-${date}` : date;
    const jsonPath = join(ROOT, 'bench/results', `${name}.json`);
    writeJson(jsonPath, results);
    ctx.log(`results: ${jsonPath}`);
    if (!quick && !only) publish(results, jsonPath);
    for (const t of results.targets)
      ctx.log(`  target ${t.met === null ? '?' : t.met ? 'met   ' : 'MISSED'} ${t.target}: ${t.value ?? 'n/a'} ${t.unit}`);
    const failed = Object.keys(ctx.errors);
    // `throughput.dbos:pool` is DBOS with another pool: the side is the system before the colon.
    const side = (name: string) => name.split('.').pop()!.split(':')[0];
    if (failed.length) ctx.log(`${failed.length} figure(s) could not be measured: ${failed.join(', ')}`);
    // A peer that cannot run here costs its figures only; a failure of ours or of the floor is a broken
    // bench, and so is a peer that produced no figure at all (a comparison with nothing on one side).
    const silent = [...new Set(failed.map(side))].filter((s) => ![...ctx.measured].some((name) => side(name) === s));
    if (silent.length) ctx.log(`no figure at all from: ${silent.join(', ')}`);
    return failed.some((name) => side(name) !== 'dbos') || silent.length ? 1 : 0;
  } finally {
    await server.stop();
  }
}

/** docs/benchmarks.md and its chart, from one run's results, stored at `source` (the page names that file). */
function publish(results: BenchResults, source: string): void {
  mkdirSync(join(ROOT, 'docs/images'), { recursive: true });
  writeFileSync(join(ROOT, 'docs', CHART), throughputChart(results));
  writeFileSync(join(ROOT, 'docs/benchmarks.md'), benchmarksMarkdown(results, CHART, relative(ROOT, source)));
  console.log(`docs/benchmarks.md and docs/${CHART} written from the results of ${results.date}`);
}

function throughputChart(r: BenchResults): string {
  return groupedBars({
    title: '3-step workflows per second, started and awaited in one process',
    subtitle: `${r.machine.cores} cores, Postgres ${r.postgres.version}, fsync ${r.postgres.settings.fsync}; median of ${r.plan.throughputReps}, whiskers min–max; ${r.date}`,
    unit: 'workflows / s',
    categories: Object.keys(r.throughputSpread),
    series: [
      { name: 'nestjs-durable', color: '#2563eb' },
      { name: 'DBOS', color: '#f59e0b' },
      { name: 'floor (raw pg)', color: '#9ca3af' },
    ],
    value: (level, series) => r.throughputSpread[level]?.[series === 'nestjs-durable' ? 'ours' : series === 'DBOS' ? 'dbos' : 'floor'],
  });
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
