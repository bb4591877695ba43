import { Client } from 'pg';
import { databaseUrl, Db, eventually, loginRole } from './durable-app';

/**
 * Holds an instance's statements mid-way, after their snapshot is taken and before they lock the rows
 * they read, so a test can commit a racing write in between. The instance connects as a login role
 * that row-level security applies to (not a superuser; a member of the admin's role for the rest), and
 * a policy on a table calls a function that, for the statements whose text holds every one of the
 * patterns, waits on an advisory lock the test holds.
 */
export class StatementGate {
  private constructor(
    /** The URL the instance connects with. */
    readonly url: string,
    private readonly db: Db,
    private readonly holder: Client,
    private readonly drop: () => Promise<void>,
  ) {}

  private get key() {
    return `hashtext('${this.db.schema}')`;
  }

  static async open(db: Db): Promise<StatementGate> {
    const admin = new URL(databaseUrl());
    const role = await loginRole(`${db.schema}_gate`, [
      `GRANT "${admin.username}" TO $role`,
      `GRANT CREATE ON DATABASE "${admin.pathname.slice(1)}" TO $role`,
    ]);
    const holder = new Client(databaseUrl());
    await holder.connect();
    return new StatementGate(role.url, db, holder, role.drop);
  }

  /** Gates the statements on `table` whose text holds every pattern (LIKE). Once the instance has made the schema. */
  async install(table: string, patterns: string[]): Promise<void> {
    const name = `${this.db.schema}_gate`;
    await this.db.query(`
      CREATE FUNCTION durable.gate() RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN
        IF ${likeAll('current_query()', patterns)} THEN
          PERFORM set_config('application_name', '${GATED}', false); -- what held() looks for
          PERFORM pg_advisory_lock_shared(${this.key});
          PERFORM pg_advisory_unlock_shared(${this.key});
          PERFORM set_config('application_name', '', false);
        END IF;
        RETURN true;
      END $$;
      ALTER TABLE durable.${table} ENABLE ROW LEVEL SECURITY;
      ALTER TABLE durable.${table} FORCE ROW LEVEL SECURITY;
      CREATE POLICY gate ON durable.${table} TO "${name}" USING (durable.gate())`);
  }

  /** Closes the gate: a matching statement waits from its next row on. */
  async hold(): Promise<void> {
    await this.holder.query(`SELECT pg_advisory_lock(${this.key})`);
  }

  async release(): Promise<void> {
    await this.holder.query(`SELECT pg_advisory_unlock(${this.key})`);
  }

  /** Waits until a statement of the instance is held at the gate. */
  async held(what: string): Promise<void> {
    await eventually(
      async () =>
        (
          await this.db.query(`SELECT 1 FROM pg_stat_activity WHERE usename = $1 AND application_name = $2 AND wait_event = 'advisory'`, [
            `${this.db.schema}_gate`,
            GATED,
          ])
        ).length > 0,
      what,
    );
  }

  /** Takes the gate off `table` (after a test, passed or failed): its statements see every row again. */
  async uninstall(table: string): Promise<void> {
    await this.db.query(`
      DROP POLICY IF EXISTS gate ON durable.${table};
      ALTER TABLE durable.${table} NO FORCE ROW LEVEL SECURITY;
      ALTER TABLE durable.${table} DISABLE ROW LEVEL SECURITY;
      DROP FUNCTION IF EXISTS durable.gate()`);
  }

  /** Once everything connected as the role has closed: the role goes, and the schema it made with it. */
  async close(): Promise<void> {
    await this.holder.end();
    await this.drop();
  }
}

/** The application_name of a session held at the gate. */
const GATED = 'statement-gate: held';

const likeAll = (text: string, patterns: string[]) =>
  patterns.map((pattern) => `${text} LIKE '%${pattern.replaceAll("'", "''")}%'`).join(' AND ');
