/**
 * Retention deletes finished runs while the schedule runs; the checker still needs their records.
 * A BEFORE DELETE trigger on each journal table copies the row (with its commit time, and for a run
 * its parent's status at that moment) into `archived_<table>` of the same schema, so the checks read
 * live rows and deleted ones alike, and the retention check reads what was deleted, when, and next to what.
 */
const KEYS: Record<string, string[]> = {
  runs: ['id'],
  steps: ['run_id', 'key'],
  signals: ['run_id', 'name'],
  messages: ['run_id', 'channel', 'key'],
  history: ['id'],
};

export const ARCHIVED_TABLES = Object.keys(KEYS);

export function archiveDdl(schema: string): string {
  const s = `"${schema}"`;
  return Object.entries(KEYS)
    .map(([table, keys]) => {
      // A run's parent read inside the delete: a parent deleted earlier in the same statement reads as NULL (it was finished).
      const parent = table === 'runs' ? ', NULL::text AS parent_status' : '';
      const parentNow = table === 'runs' ? `, (SELECT p.status FROM ${s}.runs p WHERE p.id = OLD.parent_id)` : '';
      return `
CREATE TABLE IF NOT EXISTS ${s}.archived_${table} AS
  SELECT t.*, NULL::timestamptz AS deleted_at, NULL::bigint AS committed_us${parent} FROM ${s}.${table} t WITH NO DATA;
CREATE OR REPLACE FUNCTION ${s}.archive_${table}() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  INSERT INTO ${s}.archived_${table}
  SELECT t.*, clock_timestamp(), (extract(epoch FROM pg_xact_commit_timestamp(t.xmin)) * 1000000)::bigint${parentNow}
  FROM ${s}.${table} t WHERE ${keys.map((k) => `t.${k} = OLD.${k}`).join(' AND ')};
  RETURN OLD;
END $f$;
DROP TRIGGER IF EXISTS archive_${table} ON ${s}.${table};
CREATE TRIGGER archive_${table} BEFORE DELETE ON ${s}.${table} FOR EACH ROW EXECUTE FUNCTION ${s}.archive_${table}();`;
    })
    .join('\n');
}
