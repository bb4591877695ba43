// The entry of a peer process: opens one system, then serves the parent's requests (see ops.ts).
import { countQueries } from './query-counter';
countQueries(); // before any driver is used

import { openPeer } from '../peers';
import type { PeerSpec } from '../peers/peer';
import { OpName, ops } from './ops';

export interface Request {
  id: number;
  op: OpName | 'close';
  args?: unknown;
}
export type Reply = { ready: true } | { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

async function main(): Promise<void> {
  const spec = JSON.parse(process.env.BENCH_PEER ?? '') as PeerSpec;
  const peer = await openPeer(spec);
  const send = (reply: Reply) => process.send?.(reply);
  process.on('message', (request: Request) => {
    void (async () => {
      try {
        if (request.op === 'close') {
          await peer.close();
          // Exit without waiting for stray timers: the system's own close has released its connections.
          process.send?.({ id: request.id, ok: true, result: null } satisfies Reply, () => process.exit(0));
          return;
        }
        const op = ops[request.op] as (peer: unknown, args: unknown) => unknown;
        send({ id: request.id, ok: true, result: await op(peer, request.args) });
      } catch (error) {
        send({ id: request.id, ok: false, error: (error as Error)?.stack ?? String(error) });
      }
    })();
  });
  send({ ready: true });
}

main().catch((error) => {
  console.error(`peer process failed to open: ${(error as Error)?.stack ?? String(error)}`);
  process.exit(1);
});
