import 'reflect-metadata';
import { INestApplication, INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DurableModule } from 'nestjs-durable';
import { BREAKS, BreakName } from './breaks';
import { CHAOS_QUEUES, ChaosChild, ChaosOrder, Ledger } from './chaos.workflows';
import type { EngineOptions } from './profiles';

/** What a chaos process is told by the harness, through its environment. */
export interface ProcessEnv {
  url: string;
  schema: string;
  engine: EngineOptions;
  /** A guarantee of the library broken on purpose in this process (breaks.ts). */
  break?: BreakName;
}

export const ENV_KEY = 'CHAOS_PROCESS';

export function readProcessEnv(): ProcessEnv {
  const raw = process.env[ENV_KEY];
  if (!raw) throw new Error(`${ENV_KEY} is not set: chaos processes are started by test/chaos/run.ts.`);
  return JSON.parse(raw) as ProcessEnv;
}

/** Which processes execute runs, and so write effects: every worker, and the first sender (deliver-and-claim). */
export function executes(role: string): boolean {
  return role.startsWith('worker-') || role === 'sender-0';
}

/**
 * The chaos application, as a worker (executes runs, sweeps, cleans up by retention) or as a sender
 * (starts runs, delivers, acts as the operator; it serves the dashboard's REST API on a loopback port
 * for its own operator requests; with `executes`, it also runs a worker without a sweeper, so its
 * deliveries claim the runs they wake and execute them). `role` becomes the pool's application_name
 * with the pid, which is how the connection fault finds a process's sessions (a LISTEN session is
 * 'nestjs-durable:listen:<schema>').
 */
export async function bootChaosApp(role: 'worker' | 'sender', executes = role === 'worker'): Promise<INestApplicationContext> {
  const { url, schema, engine, break: broken } = readProcessEnv();
  const worker = role === 'worker';

  @Module({
    imports: [
      DurableModule.forRoot({
        connection: { type: 'postgres', url, schema, applicationName: `chaos-${role}:${process.pid}` },
        schema,
        leaseMs: engine.leaseMs,
        inlineWaitMs: engine.inlineWaitMs,
        sweeper: worker ? { intervalMs: engine.sweepMs } : false,
        worker: { enabled: executes, concurrency: engine.concurrency },
        retention: worker && {
          completed: engine.retention.completedMs,
          cancelled: engine.retention.cancelledMs,
          intervalMs: engine.retention.intervalMs,
        },
        dashboard: !worker && { auth: { insecureNoAuth: true } },
        queues: Object.fromEntries(CHAOS_QUEUES.map((q) => [q.name, { concurrency: q.concurrency }])),
        shutdownGraceMs: 0,
      }),
    ],
    providers: [Ledger, ChaosOrder, ChaosChild],
  })
  class ChaosAppModule {}

  if (worker) {
    const app = await NestFactory.createApplicationContext(ChaosAppModule, { logger: ['error', 'warn'] });
    if (broken) BREAKS[broken](app);
    await app.init();
    return app;
  }
  const app = await NestFactory.create<INestApplication>(ChaosAppModule, { logger: ['error', 'warn'] });
  if (broken) BREAKS[broken](app);
  await app.listen(0, '127.0.0.1');
  return app;
}
