import { ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { kill, ready } from '../setup/processes';
import { ENV_KEY, ProcessEnv } from './chaos.app';
import type { Effect } from './chaos.workflows';
import { REPLY_PREFIX, SenderReply, SenderRequest } from './protocol';

const ROOT = join(__dirname, '..', '..');
const BOOT_MS = 60_000;
const BOOT_TRIES = 5;
const REQUEST_MS = 10_000;

/** What a worker announces on stdout when a slow step has written its effect and holds before its checkpoint. */
export type EffectLine = Effect & { runId: string; stepKey: string };

/** A process that ended without the harness killing it: a finding, unless it never got ready (a boot during an outage). */
export interface UnplannedExit {
  role: string;
  pid: number;
  code: number | null;
  signal: string | null;
  at: number;
  afterReady: boolean;
  log: string;
}

/**
 * A process of the fleet and its life (ms since the epoch): the effects check asks which process a
 * pid was (a worker, or a sender that executes) and whether a fault struck it.
 */
export interface ProcessRecord {
  role: string;
  pid: number;
  readyAt: number;
  exitedAt?: number;
}

/** One chaos process (ts-node, like the jest fixtures), its stdout read line by line, its stderr in a log file. */
class ChaosProcess {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  isReady = false;
  planned = false;
  private readonly lineListeners = new Set<(line: string) => void>();

  constructor(
    readonly role: string,
    file: string,
    env: ProcessEnv,
    readonly log: string,
    onUnplannedExit: (exit: UnplannedExit) => void,
  ) {
    const fd = openSync(log, 'a');
    this.child = spawn(process.execPath, ['-r', 'ts-node/register', '-r', 'tsconfig-paths/register', join(ROOT, file), role], {
      cwd: ROOT,
      env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true', TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), [ENV_KEY]: JSON.stringify(env) },
      stdio: ['pipe', 'pipe', fd],
    });
    closeSync(fd);
    this.child.stdin!.on('error', () => undefined); // a killed process's stdin: writes go nowhere
    // Nest logs warnings (lost leases, lost LISTEN) on stdout: into the log with stderr, beside our protocol lines.
    const logLine = (line: string) => !line.startsWith('effect ') && !line.startsWith(REPLY_PREFIX) && appendFileSync(log, `${line}\n`);
    createInterface({ input: this.child.stdout! }).on('line', (line) => {
      logLine(line);
      this.lineListeners.forEach((listener) => listener(line));
    });
    this.child.once('exit', (code, signal) => {
      if (!this.planned) onUnplannedExit({ role, pid: this.pid, code, signal, at: Date.now(), afterReady: this.isReady, log });
    });
    this.ready = ready(this.child, BOOT_MS).then(() => void (this.isReady = true));
    this.ready.catch(() => undefined);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  onLine(listener: (line: string) => void): () => void {
    this.lineListeners.add(listener);
    return () => this.lineListeners.delete(listener);
  }

  async kill(): Promise<void> {
    this.planned = true;
    await kill(this.child);
  }
}

/** A worker's place in the fleet: the process that fills it now, replaced after each kill. */
export class WorkerSlot {
  current?: ChaosProcess;
  paused = false;
  /** A fault has picked this worker and is not over yet: no other fault picks it meanwhile. */
  struck = false;

  constructor(readonly index: number) {}

  get pid(): number | undefined {
    return this.current?.alive ? this.current.pid : undefined;
  }

  get up(): boolean {
    return !!this.current?.alive && this.current.isReady && !this.paused;
  }

  /** Listens to this worker's "effect" lines (none when it is not alive); returns the unsubscribe. */
  onEffect(listener: (effect: EffectLine) => void): () => void {
    const process = this.current;
    if (!process?.alive) return () => undefined;
    return process.onLine((line) => line.startsWith('effect ') && listener(JSON.parse(line.slice('effect '.length)) as EffectLine));
  }
}

/** A sender: requests go out on stdin, replies come back by id. */
class Sender {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: SenderReply) => void>();

  constructor(readonly process: ChaosProcess) {
    process.onLine((line) => {
      if (!line.startsWith(REPLY_PREFIX)) return;
      const reply = JSON.parse(line.slice(REPLY_PREFIX.length)) as SenderReply;
      this.waiting.get(reply.id)?.(reply);
      this.waiting.delete(reply.id);
    });
  }

  request(body: DistributiveOmit<SenderRequest, 'id'>): Promise<SenderReply> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve({ id, ok: false, error: { name: 'Timeout', message: `no reply in ${REQUEST_MS} ms` } });
      }, REQUEST_MS);
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.process.child.stdin!.write(`${JSON.stringify({ ...body, id })}\n`);
    });
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The worker and sender processes of the test application, all on the harness's one database. */
export class Fleet {
  readonly workers: WorkerSlot[];
  readonly senders: Sender[] = [];
  readonly unplannedExits: UnplannedExit[] = [];
  /** Every process that got ready, in boot order, replaced workers included. */
  readonly processes: ProcessRecord[] = [];
  /** Boots that failed before "ready" (e.g. the server was restarting) and were tried again. */
  bootRetries = 0;

  constructor(
    private readonly env: ProcessEnv,
    private readonly logDir: string,
    workers: number,
    private readonly senderCount: number,
  ) {
    this.workers = Array.from({ length: workers }, (_, i) => new WorkerSlot(i));
  }

  async start(): Promise<void> {
    const senders = Array.from({ length: this.senderCount }, async (_, i) => {
      const process = await this.boot(`sender-${i}`, 'test/chaos/sender.process.ts');
      this.senders[i] = new Sender(process);
    });
    await Promise.all([...senders, ...this.workers.map((w) => this.startWorker(w.index))]);
  }

  /** Boots a worker in its slot, trying again (bounded) when the boot fails. */
  async startWorker(index: number): Promise<void> {
    const slot = this.workers[index];
    slot.paused = false;
    slot.current = undefined;
    slot.current = await this.boot(`worker-${index}`, 'test/chaos/worker.process.ts');
  }

  async killWorker(index: number): Promise<number | undefined> {
    const process = this.workers[index].current;
    if (!process?.alive) return undefined;
    await process.kill();
    return process.pid;
  }

  pauseWorker(index: number): number | undefined {
    const slot = this.workers[index];
    if (!slot.up) return undefined;
    slot.current!.child.kill('SIGSTOP');
    slot.paused = true;
    return slot.current!.pid;
  }

  continueWorker(index: number): void {
    const slot = this.workers[index];
    slot.current?.child.kill('SIGCONT');
    slot.paused = false;
  }

  /** Resolves with the next "effect" line of any of these workers, and whose (marked struck), or undefined after `ms`. */
  nextEffect(workers: number[], ms: number): Promise<{ worker: number; effect: EffectLine } | undefined> {
    return new Promise((resolve) => {
      const done = (found?: { worker: number; effect: EffectLine }) => {
        clearTimeout(timer);
        offs.forEach((off) => off());
        resolve(found);
      };
      const timer = setTimeout(done, ms);
      const offs = workers.map((worker) =>
        this.workers[worker].onEffect((effect) => {
          // Two cued faults may hear the same line: the first takes the worker.
          if (this.workers[worker].struck) return;
          this.workers[worker].struck = true;
          done({ worker, effect });
        }),
      );
    });
  }

  /** Workers booted and not stopped: the ones that can hold a LISTEN session right now. */
  get upWorkers(): number {
    return this.workers.filter((w) => w.up).length;
  }

  async stop(): Promise<void> {
    for (const slot of this.workers) if (slot.paused) this.continueWorker(slot.index);
    await Promise.all([...this.workers.map((w) => w.current?.kill()), ...this.senders.map((s) => s.process.kill())]);
  }

  private async boot(role: string, file: string): Promise<ChaosProcess> {
    for (let attempt = 1; ; attempt++) {
      const process = new ChaosProcess(role, file, this.env, join(this.logDir, `${role}.log`), (exit) => this.unplannedExits.push(exit));
      try {
        await process.ready;
        const record: ProcessRecord = { role, pid: process.pid, readyAt: Date.now() };
        this.processes.push(record);
        if (process.alive) process.child.once('exit', () => (record.exitedAt = Date.now()));
        else record.exitedAt = record.readyAt;
        return process;
      } catch (error) {
        await process.kill();
        if (attempt >= BOOT_TRIES)
          throw new Error(`${role} failed to boot ${BOOT_TRIES} times; see ${process.log}: ${(error as Error).message}`);
        this.bootRetries++;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }
}
