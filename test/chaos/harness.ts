import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runDurableMigrations } from 'nestjs-durable';
import { check } from './checker';
import { archiveDdl } from './archive';
import { businessDdl, ledgerDdl } from './chaos.workflows';
import { loadEvidence, Violation } from './checks/data';
import { Cluster } from './cluster';
import { HarnessDb } from './db';
import { delay, Driver } from './driver';
import { readEvidence, saveEvidence } from './evidence-file';
import { FaultRecord, runFaults } from './faults';
import { Fleet } from './fleet';
import { Monitor } from './monitor';
import { PhasePlan, planPhase } from './plan';
import { Options, profileNamed } from './profiles';
import { RunFacts, summaryTable, violationList } from './report';

const SCHEMA = 'chaos';

/**
 * One chaos session: its own PostgreSQL, the worker and sender processes, the seeded phases (runs
 * and faults), a drain, then the checker over everything the database and the harness recorded.
 * Resolves to the exit code: 0 when every promise held.
 */
export async function runChaos({ profile, seed, keep, phases: phaseCount, break: broken }: Options): Promise<number> {
  const t0 = Date.now();
  const log = (line: string) => console.log(`[chaos ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${line}`);
  const repro = `npm run chaos -- --profile ${profile.name}${profile.minutes ? ` --minutes ${profile.minutes}` : ''} --seed ${seed}${phaseCount ? ` --phases ${phaseCount}` : ''}${broken ? ` --break ${broken}` : ''}`;
  log(`seed ${seed}, profile ${profile.name}${profile.minutes ? ` (${profile.minutes} min)` : ''}; replay with: ${repro}`);
  if (broken) log(`the library is broken on purpose (${broken}): this session must fail`);

  const dir = mkdtempSync(join(tmpdir(), `chaos-${seed}-`));
  chmodSync(dir, 0o755); // the server runs as the 'postgres' user when we are root: it must reach its data directory
  const logs = join(dir, 'logs');
  mkdirSync(logs);
  let cluster: Cluster | undefined;
  let db: HarnessDb | undefined;
  let fleet: Fleet | undefined;
  let monitor: Monitor | undefined;
  let failed = true;
  try {
    cluster = await Cluster.create(join(dir, 'pg'));
    db = new HarnessDb(cluster.url, SCHEMA);
    fleet = new Fleet({ url: cluster.url, schema: SCHEMA, engine: profile.engine, break: broken }, logs, profile.workers, profile.senders);
    monitor = new Monitor(db, fleet, cluster, profile.engine.sweepMs);
    await runDurableMigrations({ connection: cluster.url, schema: SCHEMA });
    await db.query(ledgerDdl(SCHEMA));
    await db.query(businessDdl(SCHEMA));
    await db.query(archiveDdl(SCHEMA));
    await fleet.start();
    log(`PostgreSQL at ${cluster.url}; ${profile.workers} workers and ${profile.senders} senders ready (logs in ${logs})`);
    monitor.start();

    const driver = new Driver(fleet);
    const driving: Promise<void>[] = [];
    const faults: FaultRecord[] = [];
    const phases: PhasePlan[] = [];
    const deadline = profile.minutes ? t0 + profile.minutes * 60_000 : undefined;
    for (let index = 0; ; index++) {
      const spec = profile.cycle[index % profile.cycle.length];
      // ci: one cycle; soak: phases until the minutes asked for are spent (the last one may run over); --phases: that many.
      if (deadline ? Date.now() >= deadline : index >= profile.cycle.length) break;
      if (phaseCount !== undefined && index >= phaseCount) break;
      const plan = planPhase(seed, index, spec, profile);
      phases.push(plan);
      log(
        `phase ${index} (${spec.name}): ${plan.runs.length} runs, ${plan.actions.length} operator actions, ${plan.faults.length} faults, schedule ${plan.fingerprint}`,
      );
      const start = Date.now();
      // Runs outlive their phase (late signals, redeliveries): the driver is awaited at the end.
      driving.push(driver.runPhase(plan, start));
      faults.push(...(await runFaults({ fleet, db, cluster, phase: index }, plan, start, (line) => log(`  ${line}`))));
      await delay(start + spec.seconds * 1000 - Date.now());
      const stuck = await quietCheck(fleet, cluster, monitor);
      if (stuck.length) log(`  ${stuck.length} run(s) overdue at a quiet moment: ${stuck.map((s) => s.runId).join(', ')}`);
    }

    log(`driving done; draining (at most ${profile.drainSeconds} s)`);
    await Promise.race([Promise.all(driving), delay(profile.drainSeconds * 1000)]);
    await drain(db, profile.drainSeconds * 1000);
    await quietCheck(fleet, cluster, monitor);
    monitor.stop();

    const evidence = await loadEvidence(db, {
      profile,
      phases: phases.length,
      planned: phases.flatMap((p) => p.runs),
      processes: fleet.processes,
      starts: driver.starts,
      deliveries: driver.deliveries,
      rollbacks: driver.rollbacks,
      operations: driver.operations,
      faults,
      samples: monitor.samples,
      stuck: monitor.stuck,
      quietChecks: monitor.quietChecks,
    });
    saveEvidence(join(dir, 'evidence.json'), evidence);
    const verdict = check(evidence);
    const crashes: Violation[] = fleet.unplannedExits
      .filter((x) => x.afterReady)
      .map((x) => ({
        check: 'processes',
        message: `${x.role} (pid ${x.pid}) exited on its own (code ${x.code}, signal ${x.signal}); see ${x.log}`,
      }));
    verdict.violations.push(...crashes);
    const facts = {
      seed,
      profile: profile.name,
      minutes: profile.minutes,
      seconds: Math.round((Date.now() - t0) / 1000),
      phases: phases.map((p) => ({ name: p.name, fingerprint: p.fingerprint })),
      bootRetries: fleet.bootRetries,
    };
    const table = summaryTable(facts, evidence, verdict);
    console.log(`\n${table}\n`);
    writeFileSync(join(dir, 'summary.md'), `${table}\n`);
    writeFileSync(
      join(dir, 'record.json'),
      JSON.stringify(
        {
          facts,
          faults,
          deliveries: driver.deliveries,
          starts: driver.starts,
          rollbacks: driver.rollbacks,
          operations: driver.operations,
          violations: verdict.violations,
        },
        null,
        1,
      ),
    );
    failed = verdict.violations.length > 0;
    if (failed) {
      console.log(`FAILED: ${verdict.violations.length} violation(s)\n${violationList(verdict.violations)}`);
      console.log(
        `\nseed ${seed} reproduces this schedule: ${repro}\nrecord, process logs and the database's data directory kept in ${dir}`,
      );
    } else {
      console.log(`PASSED: every promise held (seed ${seed})${keep ? `; record and logs in ${dir}` : ''}`);
    }
    return failed ? 1 : 0;
  } catch (error) {
    console.log(`harness error: ${(error as Error).stack}\nseed ${seed}: ${repro}\nlogs kept in ${dir}`);
    return 1;
  } finally {
    monitor?.stop();
    await fleet?.stop().catch(() => undefined);
    await db?.close().catch(() => undefined);
    await cluster?.destroy(failed);
    if (!failed && !keep) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs the checker again over a kept session (`--recheck <dir>`, its `evidence.json` and `record.json`),
 * so a change to a check is tried on recorded sessions in seconds. A profile field the session did not
 * record yet takes today's value. Resolves to the exit code, as a session does.
 */
export function recheck(dir: string): number {
  const evidence = readEvidence(join(dir, 'evidence.json'));
  const record = JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as { facts: RunFacts; violations: Violation[] };
  const recorded = evidence.profile;
  evidence.profile = { ...profileNamed(recorded.name, recorded.minutes), ...recorded };
  const verdict = check(evidence);
  verdict.violations.push(...record.violations.filter((v) => v.check === 'processes'));
  console.log(`${summaryTable(record.facts, evidence, verdict)}\n`);
  if (!verdict.violations.length) {
    console.log(`PASSED on recheck: every promise held (seed ${record.facts.seed})`);
    return 0;
  }
  console.log(`FAILED on recheck: ${verdict.violations.length} violation(s)\n${violationList(verdict.violations)}`);
  return 1;
}

/** At a phase's end: once every worker and the server are up (bounded wait), looks for overdue runs. */
async function quietCheck(fleet: Fleet, cluster: Cluster, monitor: Monitor) {
  for (let i = 0; i < 300 && !(cluster.up && fleet.workers.every((w) => w.up)); i++) await delay(100);
  if (!(cluster.up && fleet.workers.every((w) => w.up))) return [];
  return monitor.quietCheck();
}

/** Waits (bounded) until no run is left unfinished. */
async function drain(db: HarnessDb, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const [row] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM durable.runs WHERE status NOT IN ('completed', 'failed', 'cancelled')`,
    );
    if (row.n === 0) return;
    await delay(500);
  }
}
