import { DATABASES, Server, vacuumDatabase } from './database';
import type { Plan } from './plan';
import type { PeerKind, PeerSpec } from './peers/peer';
import { PeerProcess } from './process/peer-process';

/** What every scenario gets: the plan, the server, peer processes on demand, and a place for failures. */
export class BenchContext {
  /** Failures that cost a figure, by `scenario.peer`: published instead of the figure. */
  readonly errors: Record<string, string> = {};
  /** The figures measured, by the same names: a side with failures and none of these produced nothing. */
  readonly measured = new Set<string>();

  constructor(
    readonly plan: Plan,
    readonly server: Server,
  ) {}

  /** The peer's database; the ceiling's inserts go to the floor's. */
  database(kind: PeerKind): string {
    return DATABASES[kind === 'ceiling' ? 'floor' : kind];
  }

  url(kind: PeerKind): string {
    return this.server.url(this.database(kind));
  }

  spawn(spec: Omit<PeerSpec, 'url'> & { url?: string }, execArgv: string[] = []): Promise<PeerProcess> {
    // DBOS' own pg usage triggers pg's "client.query() while executing" deprecation on every run: noise here.
    return PeerProcess.spawn({ url: this.url(spec.kind), ...spec }, spec.kind === 'dbos' ? ['--no-deprecation', ...execArgv] : execArgv);
  }

  /** Runs `fn` with fresh peer processes, closing them whatever happens. */
  async with<T>(specs: Array<Omit<PeerSpec, 'url'>>, fn: (...peers: PeerProcess[]) => Promise<T>): Promise<T> {
    const peers: PeerProcess[] = [];
    try {
      for (const spec of specs) peers.push(await this.spawn(spec));
      return await fn(...peers);
    } finally {
      for (const peer of peers.reverse()) await peer.close();
    }
  }

  /**
   * Repetitions interleaved across systems: each repetition measures every system once, in a fresh
   * process with its own warm-up, in an order that rotates from one repetition to the next. Load
   * from outside the bench (a shared machine) then falls on all systems alike, not on whichever
   * happened to run during it. A system that fails is recorded once and left out of later repetitions.
   * Each round starts after a VACUUM ANALYZE of its system's database, as autovacuum would have run
   * by then: the rows earlier rounds left would otherwise be planned with the statistics of empty
   * tables (a prepared statement keeps the plan it got then), and each round slower than the last.
   */
  async rounds<K extends string, T>(
    name: string,
    kinds: readonly K[],
    reps: number,
    specs: (kind: K) => Array<Omit<PeerSpec, 'url'>>,
    measure: (kind: K, peers: PeerProcess[], rep: number) => Promise<T>,
  ): Promise<Partial<Record<K, T[]>>> {
    const out: Partial<Record<K, T[]>> = {};
    const failed = new Set<K>();
    for (let rep = 0; rep < reps; rep++) {
      for (let i = 0; i < kinds.length; i++) {
        const kind = kinds[(i + rep) % kinds.length];
        if (failed.has(kind)) continue;
        const ok = await this.attempt(`${name}.${kind}`, async () => {
          for (const database of new Set(specs(kind).map((spec) => this.database(spec.kind)))) await vacuumDatabase(this.server, database);
          const result = await this.with(specs(kind), (...peers) => measure(kind, peers, rep));
          (out[kind] ??= []).push(result);
          return true;
        });
        if (!ok) failed.add(kind);
      }
    }
    return out;
  }

  /**
   * One figure of one system: its failure is recorded under `name` and costs that figure only, so a
   * peer that cannot run here (DBOS, say) leaves the rest of the report standing.
   */
  async attempt<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      const figure = await fn();
      this.measured.add(name);
      return figure;
    } catch (error) {
      const message = (error as Error)?.message ?? String(error);
      this.errors[name] = message.split('\n').slice(0, 3).join(' ');
      this.log(`  ${name} FAILED: ${message.split('\n')[0]}`);
      return undefined;
    }
  }

  log(message: string): void {
    const at = new Date().toISOString().slice(11, 19);
    console.log(`[bench ${at}] ${message}`);
  }
}
