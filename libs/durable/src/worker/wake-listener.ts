import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { Client, Notification } from 'pg';
import { controlChannel, queueChannel, wakeChannel } from '../durable.constants';
import { DurableDatabase } from '../persistence/durable-database';
import { DurableWorker } from './durable.worker';
import { WakeBus } from '../runtime/wake-bus';
import { DurableTelemetry } from '../observability/durable-telemetry';

const MAX_BACKOFF_MS = 10_000;
/**
 * How the LISTEN session of a schema shows in pg_stat_activity (operators and tests find it by this):
 * `nestjs-durable:listen:<schema>`, so that one application's sessions can be told from another's on
 * a shared database (Postgres keeps the first 63 bytes).
 */
export const listenerApplicationName = (schema: string) => `nestjs-durable:listen:${schema}`;

/**
 * LISTENs for wakes on one dedicated connection (never a pooled one: LISTEN belongs to a session).
 * A notification carries a run id and is a hint: it nudges the worker and any in-process wait of
 * that run; one on the queue channel carries a queue's name and asks for its admission; one on the
 * control channel names a run changed while it executes (cancelled, its deadline moved). The tables
 * stay the truth. On loss it reconnects with backoff, re-LISTENs and sweeps
 * once, since wakes sent while it was away were lost; until then the sweeper covers.
 */
@Injectable()
export class WakeListener implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('DurableWakeListener');
  private client?: Client;
  private stopped = false;
  private failures = 0;
  private retryTimer?: NodeJS.Timeout;
  /** How many times the connection was re-established after a loss. */
  reconnects = 0;

  /** The schema's channels, named once: every notification is matched against them. */
  private readonly channels: { wake: string; queue: string; control: string };

  constructor(
    private readonly db: DurableDatabase,
    private readonly worker: DurableWorker,
    private readonly bus: WakeBus,
    private readonly telemetry: DurableTelemetry,
  ) {
    const { schema } = db.tables;
    this.channels = { wake: wakeChannel(schema), queue: queueChannel(schema), control: controlChannel(schema) };
  }

  get listening(): boolean {
    return this.client !== undefined;
  }

  /** True when the LISTEN session answers and still listens on the wake channel (a round trip on it). */
  async alive(): Promise<boolean> {
    const client = this.client;
    if (!client) return false;
    try {
      const { rows } = await client.query('SELECT pg_listening_channels() AS channel');
      return rows.some((row: { channel: string }) => row.channel === this.channels.wake);
    } catch {
      return false;
    }
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.worker.enabled) return;
    await this.connect();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ ...this.db.clientConfig, application_name: listenerApplicationName(this.db.tables.schema) });
    client.on('notification', (message: Notification) => this.onNotification(message));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      const { wake, queue, control } = this.channels;
      await client.query(`LISTEN "${wake}"; LISTEN "${queue}"; LISTEN "${control}"`);
    } catch (error) {
      this.lost(client, error as Error);
      return;
    }
    if (this.stopped) return void client.end().catch(() => undefined);
    this.client = client;
    if (this.failures > 0) {
      this.reconnects++;
      this.telemetry.metrics?.listenReconnects.inc();
      this.logger.log('LISTEN connection re-established; sweeping for wakes sent meanwhile.');
      this.worker.sweep(false); // a claim pass, not a sweep the health check counts: it has no schedule pass
    }
    this.failures = 0;
  }

  private onNotification(message: Notification): void {
    if (!message.payload) return;
    if (message.channel === this.channels.queue) return this.worker.nudgeQueue(message.payload);
    if (message.channel === this.channels.control) return this.worker.recheck(message.payload);
    this.bus.wake(message.payload);
    this.worker.nudge(message.payload); // a run executing here is woken in-process and needs no claim
  }

  private lost(client: Client, error?: Error): void {
    client.removeAllListeners('end');
    client.removeAllListeners('notification');
    client.on('error', () => undefined);
    void client.end().catch(() => undefined);
    if (this.client === client) this.client = undefined;
    if (this.stopped || this.retryTimer) return;
    this.failures++;
    const backoff = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(this.failures, 7));
    this.logger.warn(`LISTEN connection lost (${error?.message ?? 'ended'}); reconnecting in ${backoff} ms.`);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, backoff);
    this.retryTimer.unref();
  }
}
