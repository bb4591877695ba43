import { ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';
import type { PeerSpec } from '../peers/peer';
import type { OpArgs, OpName, OpResult } from './ops';
import type { Reply, Request } from './peer-main';

const CALL_TIMEOUT_MS = 15 * 60_000;

/** A peer running in a child process of its own, and the typed calls into it. */
export class PeerProcess {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private exited: Promise<number | null>;

  private constructor(
    readonly spec: PeerSpec,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.on('message', (reply: Reply) => {
      if ('ready' in reply) return;
      const call = this.pending.get(reply.id);
      if (!call) return;
      this.pending.delete(reply.id);
      clearTimeout(call.timer);
      if (reply.ok) call.resolve(reply.result);
      else call.reject(new Error(`${spec.kind}: ${reply.error}`));
    });
    child.once('exit', (code) => {
      for (const call of this.pending.values()) call.reject(new Error(`${spec.kind} peer process exited (code ${code}) during a call`));
      this.pending.clear();
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Forks the peer and resolves once it is open; `execArgv` adds node flags (e.g. --cpu-prof). */
  static spawn(spec: PeerSpec, execArgv: string[] = []): Promise<PeerProcess> {
    const child = fork(join(__dirname, 'peer-main.js'), [], {
      env: { ...process.env, BENCH_PEER: JSON.stringify(spec) },
      execArgv: ['--expose-gc', ...execArgv],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${spec.kind} peer process exited (code ${code}) before it was ready`));
      child.once('exit', onExit);
      child.once('message', (reply: Reply) => {
        child.off('exit', onExit);
        if ('ready' in reply) resolve(new PeerProcess(spec, child));
        else reject(new Error(`${spec.kind}: unexpected first message`));
      });
    });
  }

  call<K extends OpName>(op: K, ...args: OpArgs<K> extends undefined ? [] : [OpArgs<K>]): Promise<OpResult<K>> {
    return this.request(op, args[0]) as Promise<OpResult<K>>;
  }

  /** Closes the system (its pools, its workers), then waits for the process to exit. */
  async close(): Promise<void> {
    if (this.child.exitCode === null && this.child.connected) {
      await this.request('close', undefined).catch(() => undefined);
    }
    const forced = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(forced);
  }

  private request(op: Request['op'], args: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`${this.spec.kind}: ${op} took over ${CALL_TIMEOUT_MS / 60_000} minutes`));
      }, CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.child.send({ id, op, args } satisfies Request);
    });
  }
}
