/**
 * A chaos sender: it starts runs, delivers signals and channel messages, and acts as the operator, as
 * the harness asks on stdin (JSON lines), answering on stdout. Several of these deliver the same
 * signal or message concurrently: the library must apply each once. Some starts and signals go
 * through an application transaction (`{ manager }`, with a business row beside them), some of those
 * rolled back on purpose; operator actions go through WorkflowClient or through this process's own
 * REST API (one run, or in bulk). The first sender (`sender-0`, its role in argv) also executes: its
 * deliveries claim the runs parked on them and run them (deliver-and-claim), through the server and
 * connection faults; the others only deliver (the NOTIFY path).
 */
import { createInterface } from 'node:readline';
import type { INestApplication } from '@nestjs/common';
import { DURABLE_DATA_SOURCE, DurableError, SignalService, WorkflowClient } from 'nestjs-durable';
import type { DataSource, EntityManager } from 'typeorm';
import { bootChaosApp, executes, readProcessEnv } from './chaos.app';
import { businessTable, ChaosOrder } from './chaos.workflows';
import { OperatorAction, OperatorOutcome, REPLY_PREFIX, SenderReply, SenderRequest, TxMode } from './protocol';

/** Thrown at the end of a transaction meant to roll back, carrying what it would have answered. */
class RolledBackOnPurpose extends Error {
  constructor(readonly accepted: boolean) {
    super('rolled back on purpose');
  }
}

async function main(): Promise<void> {
  const app = (await bootChaosApp('sender', executes(process.argv[2]))) as INestApplication;
  const client = app.get(WorkflowClient);
  const signals = app.get(SignalService);
  const dataSource = app.get<DataSource>(DURABLE_DATA_SOURCE);
  const business = businessTable(readProcessEnv().schema);
  const api = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/durable/api`;
  const actor = `sender:${process.pid}`;

  /** Without `tx`, `write` runs alone; with it, inside a transaction that first writes the business row `key`. */
  const transactional = async (
    tx: TxMode | undefined,
    key: string,
    runId: string,
    write: (manager?: EntityManager) => Promise<boolean>,
  ) => {
    if (!tx) return { accepted: await write() };
    try {
      const accepted = await dataSource.transaction(async (manager) => {
        await manager.query(`INSERT INTO ${business} (key, run_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [key, runId]);
        const accepted = await write(manager);
        if (tx === 'rollback') throw new RolledBackOnPurpose(accepted);
        return accepted;
      });
      return { accepted };
    } catch (error) {
      if (error instanceof RolledBackOnPurpose) return { accepted: error.accepted, rolledBack: true };
      throw error;
    }
  };

  const operate = async (action: OperatorAction, via: 'client' | 'rest' | 'bulk', runIds: string[]): Promise<OperatorOutcome[]> => {
    if (via === 'bulk') {
      const body = (await post(`${api}/bulk/${action}`, { runIds, ...(action === 'cancel' && { reason: 'chaos bulk' }) })) as {
        results: Array<{ runId: string; outcome: string; code?: string; message?: string }>;
      };
      return body.results.map((r) =>
        r.outcome === 'refused'
          ? { runId: r.runId, outcome: 'refused', error: { name: errorName(r.code), message: r.message ?? '' } }
          : { runId: r.runId, outcome: 'accepted' },
      );
    }
    const [runId] = runIds;
    try {
      if (via === 'rest') await post(`${api}/runs/${encodeURIComponent(runId)}/${action}`, action === 'cancel' ? { reason: 'chaos' } : {});
      else if (action === 'cancel') await client.cancel(runId, 'chaos', { actor });
      else await client[action](runId, { actor });
      return [{ runId, outcome: 'accepted' }];
    } catch (error) {
      if (!(error instanceof DurableError)) throw error; // transient: the harness tries again
      return [{ runId, outcome: 'refused', error: { name: error.name, message: error.message } }];
    }
  };

  const handle = async (request: SenderRequest): Promise<SenderReply> => {
    try {
      switch (request.op) {
        case 'start': {
          const answer = await transactional(
            request.tx,
            `start:${request.runId}`,
            request.runId,
            async (manager) =>
              (await client.start(ChaosOrder, request.input as never, { runId: request.runId, manager, actor, queue: request.queue }))
                .created,
          );
          return { id: request.id, ok: true, ...answer };
        }
        case 'signal': {
          const answer = await transactional(
            request.tx,
            `signal:${request.runId}:${request.txKey}`,
            request.runId,
            async (manager) => (await signals.signal(request.runId, request.name, request.payload, { actor, manager })).accepted,
          );
          return { id: request.id, ok: true, ...answer };
        }
        case 'send': {
          const delivery = await signals.send(request.runId, request.channel, request.key, request.payload, { actor });
          return { id: request.id, ok: true, accepted: delivery.accepted, seq: delivery.seq };
        }
        case 'operator': {
          const results = await operate(request.action, request.via, request.runIds);
          return { id: request.id, ok: true, accepted: results.some((r) => r.outcome === 'accepted'), results };
        }
      }
    } catch (error) {
      const { name, message } = error as Error;
      return { id: request.id, ok: false, error: { name, message } };
    }
  };

  createInterface({ input: process.stdin }).on('line', (line) => {
    void handle(JSON.parse(line) as SenderRequest).then((reply) => process.stdout.write(`${REPLY_PREFIX}${JSON.stringify(reply)}\n`));
  });
  process.stdin.on('end', () => void app.close().then(() => process.exit(0)));
  process.stdout.write('ready\n');
}

/** A mutating call to the REST API; a library refusal (4xx) is thrown as a DurableError-like error, anything else as transient. */
async function post(url: string, body: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-durable-request': '1' },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
  if (response.ok) return answer;
  if (response.status >= 500 || !answer.code) throw new Error(`HTTP ${response.status} ${answer.code ?? ''}: ${answer.message ?? ''}`);
  throw new RestRefusal(errorName(answer.code), answer.message ?? '');
}

/** A REST refusal, named like the library error its code stands for. */
class RestRefusal extends DurableError {
  readonly code = 'REST_REFUSAL';

  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

/** `INVALID_TRANSITION` → `InvalidTransitionError`: the class each stable code belongs to. */
function errorName(code: string | undefined): string {
  return `${(code ?? 'UNKNOWN').toLowerCase().replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())}Error`;
}

main().catch((error: Error) => {
  process.stderr.write(`boot failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
