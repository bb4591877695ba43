// Where a system spends its time under load:
// `node dist/bench/tools/profile.js [--peer=ours|dbos|floor] [--embedded] [--concurrency=64] [--seconds=10]
// [--group-commit=off|<the groupCommit option as JSON>] [--queued]`.
// `--queued` runs the loop through a queue whose concurrency is the worker's (the bench's queues scenario).
// Runs the throughput loop of the peer (default ours) in a peer process under `node --cpu-prof`, then prints the CPU
// profile's self time by package and by function, and (where pg_stat_statements is loaded, e.g.
// with --embedded) the server time of each statement per workflow.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchContext } from '../context';
import { DATABASES, openServer, recreateDatabases, Server } from '../database';
import { postmasterPid, serverCpuMs } from '../server-cpu';
import { planFor } from '../plan';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const concurrency = option('concurrency', 64);
  const seconds = option('seconds', 10);
  const kind = (args.find((a) => a.startsWith('--peer='))?.split('=')[1] ?? 'ours') as 'ours' | 'dbos' | 'floor';
  const server = await openServer({ embedded: args.includes('--embedded') });
  const ctx = new BenchContext(planFor(true), server);
  try {
    await recreateDatabases(server);
    const dir = mkdtempSync(join(tmpdir(), 'durable-profile-'));
    const grouping = args.find((a) => a.startsWith('--group-commit='))?.split('=')[1];
    const groupCommit = grouping === undefined ? undefined : grouping === 'off' ? false : JSON.parse(grouping);
    const peer = await ctx.spawn({ kind, concurrency: 64, groupCommit }, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const loopCall = args.includes('--queued') ? 'queuedLoop' : 'loop';
    await peer.call(loopCall, { concurrency, durationMs: 2_000 });
    if (server.statStatements) await server.query('SELECT pg_stat_statements_reset()');
    const postmaster = await postmasterPid(server);
    const cpuBefore = { node: await peer.call('cpuUsage'), pg: serverCpuMs(postmaster) };
    const loop = await peer.call(loopCall, { concurrency, durationMs: seconds * 1000 });
    const cpuAfter = { node: await peer.call('cpuUsage'), pg: serverCpuMs(postmaster) };
    const statements = server.statStatements
      ? await server.query<{ query: string; calls: string; total: number; mean: number }>(
          `SELECT s.query, s.calls, s.total_exec_time AS total, s.mean_exec_time AS mean FROM pg_stat_statements s
           JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY s.total_exec_time DESC LIMIT 12`,
          [DATABASES[kind]],
        )
      : [];
    await peer.close();
    const profile = JSON.parse(
      readFileSync(
        join(
          dir,
          readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))!,
        ),
        'utf8',
      ),
    ) as CpuProfile;

    console.log(
      `\n${kind}, c${concurrency}, ${seconds} s: ${loop.perSecond.toFixed(0)} workflows/s (${loop.completed} workflows, the slowest ${Math.max(...loop.latenciesMs).toFixed(0)} ms); profile in ${dir}\n`,
    );
    const per = (us: number) => `${(us / loop.completed).toFixed(0)} µs`;
    console.log(
      `CPU per workflow: node user ${per(cpuAfter.node.user - cpuBefore.node.user)}, node system ${per(cpuAfter.node.system - cpuBefore.node.system)}, ` +
        `postgres (all its processes) ${per((cpuAfter.pg - cpuBefore.pg) * 1000)}; the machine has ${cpus().length} cores\n`,
    );
    const { byPackage, byFunction, totalMs } = selfTimes(profile);
    console.log(
      `CPU self time of the peer process: ${totalMs.toFixed(0)} ms over ${seconds * 1000} ms wall (${((totalMs / (seconds * 1000)) * 100).toFixed(0)}% of one core incl. idle)`,
    );
    console.log(`per workflow: ${(((totalMs - (byPackage.get('(idle)') ?? 0)) * 1000) / loop.completed).toFixed(0)} µs of busy CPU\n`);
    console.log('by package:');
    for (const [name, ms] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log(`  ${pct(ms, totalMs)}  ${name}`);
    console.log('\nby function (top 30):');
    for (const [name, ms] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${pct(ms, totalMs)}  ${name}`);
    if (statements.length) {
      console.log('\nserver time per statement (pg_stat_statements):');
      for (const s of statements) {
        console.log(
          `  ${(Number(s.calls) / loop.completed).toFixed(2)}/wf  mean ${s.mean.toFixed(3)} ms  total ${s.total.toFixed(0)} ms  ${s.query.replace(/\s+/g, ' ').slice(0, 110)}`,
        );
      }
    }
  } finally {
    await server.stop();
  }
}

/** The postmaster's pid, from its data directory (the server must be on this machine). */
/** Self time per package and per function, from the samples and their time deltas. */
function selfTimes(profile: CpuProfile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const frame = nodes.get(id)!.callFrame;
    const pkg = packageOf(frame.url, frame.functionName);
    const fn = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    totalMs += ms;
  });
  return { byPackage, byFunction, totalMs };
}

function packageOf(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const lib = /libs\/durable\/dist\/([^/]+)/.exec(url);
  if (lib) return `nestjs-durable ${lib[1].replace(/\.js$/, '')}`;
  const mod = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (mod) return mod[1];
  if (url.includes('/dist/bench/')) return 'bench';
  return url;
}

function shortUrl(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/^.*node_modules\//, '')
    .replace(/^.*libs\/durable\/dist\//, 'durable/');
}

function pct(ms: number, total: number): string {
  return `${((ms / total) * 100).toFixed(1).padStart(5)}% ${ms.toFixed(0).padStart(6)} ms`;
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
