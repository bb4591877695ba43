/**
 * A chaos worker: the chaos application with its worker and sweeper on. Prints "ready", then
 * "effect {…}" lines from the slow steps (the harness's cue for a kill inside the crash window),
 * and runs until it is killed. Logs (warnings: lost leases, lost LISTEN) go to stderr.
 */
import { bootChaosApp } from './chaos.app';

bootChaosApp('worker').then(
  () => process.stdout.write('ready\n'),
  (error: Error) => {
    process.stderr.write(`boot failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);

// The harness holds our stdin: when it goes away (its own crash included), so do we.
process.stdin.on('end', () => process.exit(0)).resume();
