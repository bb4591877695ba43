import { DBOS, DBOSClient, WorkflowHandle } from '@dbos-inc/dbos-sdk';
import { performance } from 'node:perf_hooks';
import { delay } from '../measure';
import { Marks } from './marks';
import type { Peer, PeerSpec } from './peer';

const APP = 'nestjs-durable-bench';
const lateness = new Marks();
const reached = new Marks();
const spawned = new Marks();

/**
 * DBOS Transact: the same workflows with its own API (registerWorkflow, runStep, recv/send, sleep,
 * startWorkflow), its system database on the same server. DBOS is a process-wide singleton, so each
 * peer process holds exactly one; registration happens before launch, as DBOS requires.
 */
export async function openDbos(spec: PeerSpec): Promise<Peer> {
  if (spec.worker === false) return openDeliverer(spec);

  const threeSteps = DBOS.registerWorkflow(
    async (n: number) => {
      const a = await DBOS.runStep(async () => n + 1, { name: 'one' });
      const b = await DBOS.runStep(async () => a + 1, { name: 'two' });
      return DBOS.runStep(async () => b + 1, { name: 'three' });
    },
    { name: 'bench-three-steps' },
  );
  const awaitGo = DBOS.registerWorkflow(
    async () => {
      reached.put(DBOS.workflowID!, performance.now());
      return DBOS.recv<string>('go', { timeoutSeconds: 600 });
    },
    { name: 'bench-await-go' },
  );
  const nap = DBOS.registerWorkflow(
    async (ms: number) => {
      const id = DBOS.workflowID!;
      const intended = lateness.first(id) + ms;
      await DBOS.sleep(ms);
      lateness.put(id, performance.now() - intended);
      return null;
    },
    { name: 'bench-nap' },
  );
  const fanOut = DBOS.registerWorkflow(
    async (children: number) => {
      const handles: WorkflowHandle<number>[] = [];
      for (let i = 0; i < children; i++) handles.push(await DBOS.startWorkflow(threeSteps)(i));
      spawned.put(DBOS.workflowID!, performance.now());
      for (const handle of handles) await handle.getResult();
      return handles.length;
    },
    { name: 'bench-fan-out' },
  );

  DBOS.setConfig({
    name: APP,
    systemDatabaseUrl: spec.url,
    ...(spec.pool === undefined ? {} : { systemDatabasePoolSize: spec.pool }),
    logLevel: 'error',
  });
  await DBOS.launch();
  // Its queue at the same limit as ours (the worker's concurrency), for the queued throughput.
  await DBOS.registerQueue('bench', { concurrency: spec.concurrency, onConflict: 'always_update' });
  const handles = new Map<string, WorkflowHandle<string | null>>();

  return {
    async runOnce() {
      return (await DBOS.startWorkflow(threeSteps)(1)).getResult();
    },
    async runQueued() {
      return (await DBOS.startWorkflow(threeSteps, { queueName: 'bench' })(1)).getResult();
    },
    waiting: {
      async start() {
        const handle = await DBOS.startWorkflow(awaitGo)();
        handles.set(handle.workflowID, handle);
        await reached.take(handle.workflowID);
        // recv has no observable "waiting" state; give it the moment it needs to check and subscribe.
        await delay(5);
        return handle.workflowID;
      },
      async result(id) {
        const handle = handles.get(id) ?? DBOS.retrieveWorkflow<string | null>(id);
        handles.delete(id);
        return handle.getResult();
      },
      deliver: (id) => DBOS.send(id, 'now', 'go'),
    },
    async sleepLateness(ms) {
      const handle = await DBOS.startWorkflow(nap)(ms);
      return lateness.take(handle.workflowID);
    },
    async fanOut(children) {
      const t0 = performance.now();
      const handle = await DBOS.startWorkflow(fanOut)(children);
      await handle.getResult();
      const totalMs = performance.now() - t0;
      return { spawnMs: (await spawned.take(handle.workflowID)) - t0, totalMs };
    },
    close: () => DBOS.shutdown(),
  };
}

/** A second instance that only delivers: DBOS' client, connected to the same system database. */
async function openDeliverer(spec: PeerSpec): Promise<Peer> {
  const client = await DBOSClient.create({ systemDatabaseUrl: spec.url, applicationName: APP });
  const unsupported = () => Promise.reject(new Error('a DBOS client only delivers'));
  return {
    runOnce: unsupported,
    waiting: { start: unsupported, result: unsupported, deliver: (id) => client.send(id, 'now', 'go') },
    close: () => client.destroy(),
  };
}
