// Where a lone workflow's time goes, in a fresh process and once it is warm:
// `node dist/bench/tools/lone-workflow.js [--embedded] [--samples=300] [--warm=3000] [--signal]`.
// Runs nestjs-durable in this process on a fresh database, one 3-step workflow at a time: a third of
// `samples` to warm up, `samples` measured (fresh), `warm` more, `samples` measured again (warm). Per
// phase it prints the medians of the workflow's time, of its statements' round trips (from the pg
// client's send to its answer's callback) and of the rest (Node between them), and the process's CPU
// against its main thread's busy time: the difference is V8's background threads (optimizing, GC).
// `--signal`: the bench's in-process signal round trip instead (a run waiting for `go`, started and
// parked untimed; timed from the delivery to the result), with each of its statements' round trips.
import { Client } from 'pg';
import { DATABASES, openServer, recreateDatabases } from '../database';
import { openOurs } from '../peers/ours';

type Callback = (...args: unknown[]) => unknown;

/**
 * Times the statements the pg clients of this process send with a callback (pg-pool's, which carry a lone
 * workflow's writes) while `timing` is set: send to answer. A background statement meanwhile (a sweep) counts too.
 */
function timeRoundTrips(): { start(): void; stop(): number; each(): number[] } {
  let spent = 0;
  let each: number[] = [];
  let timing = false;
  const query = Client.prototype.query as unknown as (this: Client, ...args: unknown[]) => unknown;
  (Client.prototype as unknown as { query: typeof query }).query = function (this: Client, ...args: unknown[]) {
    const last = args.length - 1;
    const answer = args[last];
    if (timing && typeof answer === 'function') {
      const sent = performance.now();
      const trips = each;
      args[last] = (...result: unknown[]) => {
        spent += performance.now() - sent;
        trips.push(performance.now() - sent);
        return (answer as Callback)(...result);
      };
    }
    return query.apply(this, args);
  };
  return {
    start: () => ((spent = 0), (each = []), (timing = true)),
    stop: () => ((timing = false), spent),
    each: () => each,
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Each statement's median round trip, in order, over the samples that sent the most common number of statements. */
function byPosition(samples: number[][]): string {
  const counts = new Map<number, number>();
  for (const s of samples) counts.set(s.length, (counts.get(s.length) ?? 0) + 1);
  const [count] = [...counts].sort((a, b) => b[1] - a[1])[0];
  const alike = samples.filter((s) => s.length === count);
  const each = Array.from({ length: count }, (_, i) => median(alike.map((s) => s[i])).toFixed(2));
  return `statement by statement ${each.join(', ')} ms (${alike.length} samples of ${count})`;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const option = (name: string, fallback: number) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const samples = option('samples', 300);
  const server = await openServer({ embedded: args.includes('--embedded') });
  try {
    await recreateDatabases(server);
    const roundTrips = timeRoundTrips();
    const peer = await openOurs({ kind: 'ours', url: server.url(DATABASES.ours), concurrency: 64 });
    const signal = args.includes('--signal');
    const waiting = peer.waiting!;
    // One sample: its untimed preparation (the signal's waiting run), then the timed operation.
    const sample = signal
      ? async () => {
          const runId = await waiting.start(false);
          return () => waiting.deliver(runId).then(() => waiting.result(runId));
        }
      : async () => () => peer.runOnce();
    const phase = async (name: string) => {
      const totals: number[] = [];
      const trips: number[] = [];
      const statements: number[][] = [];
      const cpu = process.cpuUsage();
      const loop = performance.eventLoopUtilization();
      for (let i = 0; i < samples; i++) {
        const timed = await sample();
        const t0 = performance.now();
        roundTrips.start();
        await timed();
        trips.push(roundTrips.stop());
        totals.push(performance.now() - t0);
        statements.push(roundTrips.each());
      }
      const used = process.cpuUsage(cpu);
      const busy = performance.eventLoopUtilization(loop).active;
      const rest = totals.map((t, i) => t - trips[i]);
      const what = signal ? 'round trip' : 'workflow';
      console.log(
        `${name}: ${what} ${median(totals).toFixed(2)} ms, its statements' round trips ${median(trips).toFixed(2)} ms, Node ` +
          `between them ${median(rest).toFixed(2)} ms; ${byPosition(statements)}; process CPU ` +
          `${((used.user + used.system) / 1000).toFixed(0)} ms, main thread busy ${busy.toFixed(0)} ms (${samples} ${what}s` +
          `${signal ? ', with their untimed starts' : ''})`,
      );
    };
    for (let i = 0; i < Math.ceil(samples / 3); i++) await (await sample())();
    await phase('fresh');
    for (let i = 0; i < option('warm', signal ? 600 : 3000); i++) await (await sample())();
    await phase('warm');
    await peer.close();
  } finally {
    await server.stop();
  }
}

void main();
