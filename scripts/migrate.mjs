#!/usr/bin/env node
// Applies nestjs-durable's migrations, for teams that migrate before deploying (then boot with
// `migrationsRun: false`). Usage: DATABASE_URL=postgres://… [DURABLE_SCHEMA=durable] npm run migrate
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { runDurableMigrations } = require('nestjs-durable');

const connection = process.env.DATABASE_URL;
if (!connection) {
  console.error('Set DATABASE_URL to the database to migrate (and DURABLE_SCHEMA when not "durable").');
  process.exit(2);
}
const schema = process.env.DURABLE_SCHEMA ?? 'durable';
const applied = await runDurableMigrations({ connection, schema });
console.log(applied.length ? `Applied to schema "${schema}": ${applied.join(', ')}` : `Schema "${schema}" is up to date.`);
