import { DATABASES, DatabaseRole, Server } from './database';
import type { Plan } from './plan';
import type { PeerKind, PeerSpec } from './peers/peer';
import { PeerProcess } from './process/peer-process';

/** What every scenario gets: the plan, the server, peer processes on demand, and a place for failures. */
export class BenchContext {
  /** Failures that cost a figure, by `scenario.peer`: published instead of the figure. */
  readonly errors: Record<string, string> = {};

  constructor(
    readonly plan: Plan,
    readonly server: Server,
  ) {}

  url(kind: PeerKind): string {
    const role: DatabaseRole = kind === 'ceiling' ? 'floor' : kind;
    return this.server.url(DATABASES[role]);
  }

  database(kind: PeerKind): string {
    return DATABASES[kind === 'ceiling' ? 'floor' : kind];
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
   * One figure of one system: its failure is recorded under `name` and costs that figure only, so a
   * peer that cannot run here (DBOS, say) leaves the rest of the report standing.
   */
  async attempt<T>(name: string, fn: () => Promise<T>): Promise<T | undefined> {
    try {
      return await fn();
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
