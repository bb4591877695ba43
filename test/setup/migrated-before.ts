import { DataSource } from 'typeorm';
import { DURABLE_MIGRATIONS } from 'nestjs-durable';
import { databaseUrl } from './durable-app';

/**
 * Makes `schema` as a version of the library before the migration `name` left it: every migration
 * before that one applied. Answers the migrations still to run (that one and the ones after it).
 */
export async function migratedBefore(schema: string, name: string): Promise<string[]> {
  const index = DURABLE_MIGRATIONS.findIndex((m) => m.name === name);
  if (index < 0) throw new Error(`No migration named ${name}.`);
  const before = await new DataSource({
    type: 'postgres',
    url: databaseUrl(),
    schema,
    migrations: DURABLE_MIGRATIONS.slice(0, index),
    migrationsTableName: 'migrations',
  }).initialize();
  try {
    await before.query(`CREATE SCHEMA "${schema}"`);
    await before.runMigrations({ transaction: 'each' });
  } finally {
    await before.destroy();
  }
  return DURABLE_MIGRATIONS.slice(index).map((m) => m.name);
}
