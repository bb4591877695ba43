// Where a lone workflow's time goes, in a fresh process and once it is warm:
// `node dist/bench/tools/lone-workflow.js [--embedded] [--samples=300] [--warm=3000]`.
// Runs nestjs-durable in this process on a fresh database, one 3-step workflow at a time: a third of
// `samples` to warm up, `samples` measured (fresh), `warm` more, `samples` measured again (warm). Per
// phase it prints the medians of the workflow's time, of its statements' round trips (from the pg
// client's send to its answer's callback) and of the rest (Node between them), and the process's CPU
// against its main thread's busy time: the difference is V8's background threads (optimizing, GC).
import { Client } from 'pg';
import { DATABASES, openServer, recreateDatabases } from '../database';
import { openOurs } from '../peers/ours';

type Callback = (...args: unknown[]) => unknown;

/**
 * Times the statements the pg clients of this process send with a callback (pg-pool's, which carry a lone
 * workflow's writes) while `timing` is set: send to answer. A background statement meanwhile (a sweep) counts too.
 */
function timeRoundTrips(): { start(): void; stop(): number } {
  let spent = 0;
  let timing = false;
  const query = Client.prototype.query as unknown as (this: Client, ...args: unknown[]) => unknown;
  (Client.prototype as unknown as { query: typeof query }).query = function (this: Client, ...args: unknown[]) {
    const last = args.length - 1;
    const answer = args[last];
    if (timing && typeof answer === 'function') {
      const sent = performance.now();
      args[last] = (...result: unknown[]) => {
        spent += performance.now() - sent;
        return (answer as Callback)(...result);
      };
    }
    return query.apply(this, args);
  };
  return {
    start: () => ((spent = 0), (timing = true)),
    stop: () => ((timing = false), spent),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const samples = option('samples', 300);
  const server = await openServer({ embedded: args.includes('--embedded') });
  try {
    await recreateDatabases(server);
    const roundTrips = timeRoundTrips();
    const peer = await openOurs({ kind: 'ours', url: server.url(DATABASES.ours), concurrency: 64 });
    const phase = async (name: string) => {
      const totals: number[] = [];
      const trips: number[] = [];
      const cpu = process.cpuUsage();
      const loop = performance.eventLoopUtilization();
      for (let i = 0; i < samples; i++) {
        const t0 = performance.now();
        roundTrips.start();
        await peer.runOnce();
        trips.push(roundTrips.stop());
        totals.push(performance.now() - t0);
      }
      const used = process.cpuUsage(cpu);
      const busy = performance.eventLoopUtilization(loop).active;
      const rest = totals.map((t, i) => t - trips[i]);
      console.log(
        `${name}: workflow ${median(totals).toFixed(2)} ms, its round trips ${median(trips).toFixed(2)} ms, Node between them ` +
          `${median(rest).toFixed(2)} ms; process CPU ${((used.user + used.system) / 1000).toFixed(0)} ms, main thread busy ` +
          `${busy.toFixed(0)} ms (${samples} workflows)`,
      );
    };
    for (let i = 0; i < Math.ceil(samples / 3); i++) await peer.runOnce();
    await phase('fresh');
    for (let i = 0; i < option('warm', 3000); i++) await peer.runOnce();
    await phase('warm');
    await peer.close();
  } finally {
    await server.stop();
  }
}

void main();
