/**
 * A chaos sender: it starts runs and delivers signals and channel messages as the harness asks on
 * stdin (JSON lines), answering on stdout. Several of these deliver the same signal or message
 * concurrently: the library must apply each once. The first sender (`sender-0`, its role in argv)
 * also executes: its deliveries claim the runs parked on them and run them (deliver-and-claim),
 * through the server and connection faults; the others only deliver (the NOTIFY path).
 */
import { createInterface } from 'node:readline';
import { SignalService, WorkflowClient } from 'nestjs-durable';
import { bootChaosApp } from './chaos.app';
import { ChaosOrder } from './chaos.workflows';
import { REPLY_PREFIX, SenderReply, SenderRequest } from './protocol';

async function main(): Promise<void> {
  const app = await bootChaosApp('sender', process.argv[2] === 'sender-0');
  const client = app.get(WorkflowClient);
  const signals = app.get(SignalService);
  const actor = `sender:${process.pid}`;

  const handle = async (request: SenderRequest): Promise<SenderReply> => {
    try {
      switch (request.op) {
        case 'start': {
          const run = await client.start(ChaosOrder, request.input as never, { runId: request.runId });
          return { id: request.id, ok: true, accepted: run.created };
        }
        case 'signal': {
          const delivery = await signals.signal(request.runId, request.name, request.payload, { actor });
          return { id: request.id, ok: true, accepted: delivery.accepted };
        }
        case 'send': {
          const delivery = await signals.send(request.runId, request.channel, request.key, request.payload, { actor });
          return { id: request.id, ok: true, accepted: delivery.accepted, seq: delivery.seq };
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

main().catch((error: Error) => {
  process.stderr.write(`boot failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
