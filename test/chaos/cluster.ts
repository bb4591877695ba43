import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Started {
  url: string;
  port: number;
  stop: () => Promise<void>;
}
type StartEmbedded = (args: { dir: string; port?: number; persistent?: boolean; postgresFlags?: string[] }) => Promise<Started>;

/** The ESM helper, loaded from CommonJS without TypeScript rewriting the import into a require. */
const esmImport = new Function('s', 'return import(s)') as (specifier: string) => Promise<{ startEmbeddedPostgres: StartEmbedded }>;

/**
 * The harness's own PostgreSQL, so it can be restarted: same data directory, same port.
 * track_commit_timestamp lets the checker order a checkpoint against the claim that fenced it out.
 */
export class Cluster {
  private current?: Started;
  private restarting: Promise<unknown> = Promise.resolve();
  /** False while the server is stopped for a restart. */
  up = false;

  private constructor(
    readonly dir: string,
    private readonly start: StartEmbedded,
  ) {}

  static async create(dir: string): Promise<Cluster> {
    const { startEmbeddedPostgres } = await esmImport(pathToFileURL(join(__dirname, '..', 'setup', 'embedded-postgres.mjs')).href);
    const cluster = new Cluster(dir, startEmbeddedPostgres);
    await cluster.boot();
    return cluster;
  }

  get url(): string {
    return this.current!.url;
  }

  /** Stops the server (fast shutdown: every session is cut), waits `downMs`, starts it again. */
  restart(downMs: number): Promise<{ stoppedAt: number; startedAt: number }> {
    // One restart at a time, whatever the schedule says.
    const next = this.restarting.then(() => this.stopAndStart(downMs));
    this.restarting = next.catch(() => undefined);
    return next;
  }

  private async stopAndStart(downMs: number): Promise<{ stoppedAt: number; startedAt: number }> {
    this.up = false;
    await this.current!.stop();
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, downMs));
    await this.boot(this.current!.port);
    return { stoppedAt, startedAt: Date.now() };
  }

  /** Stops the server; its data directory is removed unless kept (for a look after a failure). */
  async destroy(keepData = false): Promise<void> {
    this.up = false;
    await this.current?.stop().catch(() => undefined);
    if (!keepData) rmSync(this.dir, { recursive: true, force: true });
  }

  private async boot(port?: number): Promise<void> {
    this.current = await this.start({
      dir: this.dir,
      port,
      persistent: true,
      postgresFlags: ['-c', 'track_commit_timestamp=on'],
    });
    this.up = true;
  }
}
