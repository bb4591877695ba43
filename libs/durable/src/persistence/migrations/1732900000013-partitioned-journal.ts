import { MigrationInterface, QueryRunner } from 'typeorm';
import { schemaOf, Tables, tablesFor } from '../tables';
import { JOURNAL_VACUUM, JOURNAL_VACUUM_RELOPTIONS } from './1732900000001-operations';

/**
 * A run's journal as JSON, `run` and `day` SQL expressions: what journal_of returns, and, since
 * BatchedJournalReads1732900000015, journals_of for each of its runs.
 */
export const journalJsonSql = (t: Tables, run: string, day: string) => `json_build_object(
          'steps', (SELECT COALESCE(json_agg(json_build_object('key', key, 'kind', kind, 'outcome', outcome, 'result', result, 'error', error)), '[]')
                    FROM ${t.steps} WHERE run_id = ${run} AND run_day = ${day}),
          'signals', (SELECT COALESCE(json_agg(json_build_object('name', name, 'payload', payload, 'deliveredAt', delivered_at)), '[]')
                      FROM ${t.signals} WHERE run_id = ${run} AND run_day = ${day}),
          'messages', (SELECT COALESCE(json_agg(json_build_object('channel', channel, 'key', key, 'seq', seq, 'payload', payload, 'sentAt', sent_at) ORDER BY seq), '[]')
                       FROM ${t.messages} WHERE run_id = ${run} AND run_day = ${day} AND acked_at IS NULL),
          'children', (SELECT COALESCE(json_agg(json_build_object('id', child.id, 'status', child.status, 'output', child.output, 'error', child.error)), '[]')
                       FROM ${t.runs} child
                       WHERE child.id = (SELECT parked.wait->>'childRunId' FROM ${t.runs} parked WHERE parked.id = ${run} AND parked.wait_kind = 'child')
                         AND child.status IN ('completed', 'failed', 'cancelled')
                         AND NOT EXISTS (SELECT 1 FROM ${t.steps} taken
                                         WHERE taken.run_id = ${run} AND taken.run_day = ${day} AND taken.key = 'child-result:' || child.parent_step)))`;

/**
 * The function that makes the journal's day partitions (JournalPartitions calls it): `vacuumed`, each
 * day's partitions vacuum after 5% of their rows changed or were inserted, as the migrations set for
 * the plain tables before them (JournalPartitionVacuum1732900000021); a partition made by LIKE takes
 * none of its parent's table options.
 */
export const makeJournalPartitionsSql = (t: Tables, vacuumed = false) => `
      CREATE OR REPLACE FUNCTION ${t.makeJournalPartitions}(p_from integer, p_to integer) RETURNS void LANGUAGE plpgsql
      SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
      DECLARE
        day date;
        parent text;
        part text;
      BEGIN
        IF p_from < -31 OR p_to > 7 OR p_from > p_to THEN
          RAISE EXCEPTION 'make_journal_partitions: days % to % are outside a month back and a week ahead', p_from, p_to;
        END IF;
        PERFORM pg_advisory_xact_lock(hashtext('nestjs-durable:partitions:${t.schema}'));
        FOR day IN SELECT timezone('UTC', now())::date + g FROM generate_series(p_from, p_to) g LOOP
          FOREACH parent IN ARRAY ARRAY['steps', 'signals', 'messages', 'history'] LOOP
            part := parent || '_d' || to_char(day, 'YYYYMMDD');
            IF to_regclass(format('%I.%I', '${t.schema}', part)) IS NULL THEN
              EXECUTE format('CREATE TABLE %I.%I (LIKE %I.%I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', '${t.schema}', part, '${t.schema}', parent);
              EXECUTE format('ALTER TABLE %I.%I ATTACH PARTITION %I.%I FOR VALUES FROM (%L) TO (%L)',
                             '${t.schema}', parent, '${t.schema}', part, day, day + 1);
            END IF;${
              vacuumed
                ? `
            -- Also on a day made without it (by the function of before, while the migration that replaced it ran).
            IF NOT (SELECT COALESCE(reloptions, '{}') @> ${JOURNAL_VACUUM_RELOPTIONS} FROM pg_class WHERE oid = to_regclass(format('%I.%I', '${t.schema}', part))) THEN
              EXECUTE format('ALTER TABLE %I.%I SET (${JOURNAL_VACUUM})', '${t.schema}', part);
            END IF;`
                : ''
            }
          END LOOP;
        END LOOP;
      END $$`;

/**
 * The journal (steps, signals, messages, history) partitioned by `run_day`, the UTC day its run was
 * created, so that retention drops a day's partitions instead of deleting rows (journal-partitions.ts
 * creates each day's ahead of time and drops them). A run's rows all share its day, so the keys that
 * make a checkpoint, a signal or a message unique (first writer wins) still hold with the day added.
 *
 * No journal row is copied: each current table becomes the partition `<table>_legacy` of its new
 * parent, day 1970-01-01, which is also the day of every run created before this migration (a column
 * added with a constant default rewrites nothing). A schedule's audit rows, which are no run's, move
 * to `history_standing` (day -infinity). What it costs is the new keys' indexes on the old
 * rows (they include run_day), built under this migration's lock: seconds per million journal rows.
 *
 * `journal_of(run, day)` reads a run's journal (what an execution loads: its checkpoints, signals,
 * un-acked messages in order, and the child it parked on once that ended and before its result is
 * journaled). A statement that finds the day in a row it reads (a claim) prunes partitions only as it
 * runs, after it has set up a scan of every partition: a cost that grows with the days kept (a third of
 * a millisecond per journal load at 44 partitions, measured). The function takes the day as a
 * parameter and plans its statement generically (its own plan_cache_mode), so Postgres prunes to the
 * one partition before setting anything up. STABLE: it reads the calling statement's snapshot.
 *
 * `make_journal_partitions(from, to)` makes the partitions missing for a range of days around the
 * database's UTC today (at most a month back and a week ahead): a table like its parent, then ATTACH,
 * which locks the parent only against other DDL (CREATE TABLE … PARTITION OF would lock out every
 * reader and writer of the journal). SECURITY DEFINER, with a fixed search_path: it runs with the
 * rights of the role that migrated, so the application's role needs none to create tables. Callers
 * at once are serialized by an advisory lock, so each partition is made once.
 */
export class PartitionedJournal1732900000013 implements MigrationInterface {
  name = 'PartitionedJournal1732900000013';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    const s = `"${t.schema}"`;
    await queryRunner.query(`ALTER TABLE ${t.runs} ADD COLUMN run_day date NOT NULL DEFAULT '1970-01-01'`);
    await queryRunner.query(`ALTER TABLE ${t.runs} ALTER COLUMN run_day SET DEFAULT timezone('UTC', now())::date`);
    // Retention asks "is any run of this day left?" once per day partition.
    await queryRunner.query(`CREATE INDEX runs_day_idx ON ${t.runs} (run_day)`);

    const keys: Record<string, string[]> = {
      steps: ['steps_pkey PRIMARY KEY (run_id, key, run_day)'],
      signals: ['signals_pkey PRIMARY KEY (run_id, name, run_day)'],
      messages: [
        'messages_pkey PRIMARY KEY (run_id, channel, key, run_day)',
        'messages_run_id_channel_seq_key UNIQUE (run_id, channel, seq, run_day)',
      ],
      history: ['history_pkey PRIMARY KEY (id, run_day)'],
    };
    for (const [table, constraints] of Object.entries(keys)) {
      // The old keys go (the new ones, with the day, take their names); the old indexes' names go to the
      // parent's indexes below: ATTACH adopts an equal index of the partition instead of building one.
      await queryRunner.query(`ALTER TABLE ${s}.${table} RENAME TO ${table}_legacy`);
      const existing: { conname: string }[] = await queryRunner.query(
        `SELECT conname FROM pg_constraint WHERE conrelid = '${s}.${table}_legacy'::regclass AND contype IN ('p', 'u')`,
      );
      for (const { conname } of existing) await queryRunner.query(`ALTER TABLE ${s}.${table}_legacy DROP CONSTRAINT "${conname}"`);
      await queryRunner.query(`ALTER TABLE ${s}.${table}_legacy ADD COLUMN run_day date NOT NULL DEFAULT '1970-01-01'`);
      await queryRunner.query(`ALTER TABLE ${s}.${table}_legacy ALTER COLUMN run_day DROP DEFAULT`);
      await queryRunner.query(
        `CREATE TABLE ${s}.${table} (LIKE ${s}.${table}_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS, ${constraints
          .map((c) => `CONSTRAINT ${c}`)
          .join(', ')}) PARTITION BY RANGE (run_day)`,
      );
    }
    // history's ids come from its sequence, which must outlive the legacy partition it was made for.
    await queryRunner.query(`ALTER SEQUENCE ${s}.history_id_seq OWNED BY ${t.history}.id`);
    await queryRunner.query(`ALTER INDEX ${s}.history_run_idx RENAME TO history_legacy_run_idx`);
    await queryRunner.query(`ALTER INDEX ${s}.history_at_brin RENAME TO history_legacy_at_brin`);
    await queryRunner.query(`CREATE INDEX history_run_idx ON ${t.history} (run_id, id)`);
    await queryRunner.query(`CREATE INDEX history_at_brin ON ${t.history} USING brin (at)`);
    for (const table of Object.keys(keys)) {
      await queryRunner.query(
        `ALTER TABLE ${s}.${table} ATTACH PARTITION ${s}.${table}_legacy FOR VALUES FROM ('1970-01-01') TO ('1970-01-02')`,
      );
    }
    // History rows that are no run's (a schedule's audit trail) have a partition of their own, never dropped.
    await queryRunner.query(`CREATE TABLE ${s}.history_standing (LIKE ${t.history} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await queryRunner.query(`ALTER TABLE ${t.history} ATTACH PARTITION ${s}.history_standing FOR VALUES FROM (MINVALUE) TO ('1970-01-01')`);
    await queryRunner.query(
      `UPDATE ${t.history} h SET run_day = '-infinity' WHERE run_id LIKE 'schedule:%' AND NOT EXISTS (SELECT 1 FROM ${t.runs} r WHERE r.id = h.run_id)`,
    );
    await queryRunner.query(makeJournalPartitionsSql(t));
    await queryRunner.query(`
      CREATE FUNCTION ${t.journalOf}(p_run text, p_day date) RETURNS json LANGUAGE plpgsql STABLE
      SET plan_cache_mode = force_generic_plan AS $$
      BEGIN
        RETURN ${journalJsonSql(t, 'p_run', 'p_day')};
      END $$`);
  }

  /** Copies the journal back into plain tables (the one way to merge partitions), with the keys of before. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const t = tablesFor(schemaOf(queryRunner));
    const s = `"${t.schema}"`;
    await queryRunner.query(`DROP FUNCTION ${t.journalOf}(text, date)`);
    await queryRunner.query(`DROP FUNCTION ${t.makeJournalPartitions}(integer, integer)`);
    const keys: Record<string, string[]> = {
      steps: ['PRIMARY KEY (run_id, key)'],
      signals: ['PRIMARY KEY (run_id, name)'],
      messages: ['PRIMARY KEY (run_id, channel, key)', 'UNIQUE (run_id, channel, seq)'],
      history: ['PRIMARY KEY (id)'],
    };
    for (const [table, constraints] of Object.entries(keys)) {
      await queryRunner.query(`CREATE TABLE ${s}.${table}_flat (LIKE ${s}.${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
      await queryRunner.query(`INSERT INTO ${s}.${table}_flat SELECT * FROM ${s}.${table}`);
      if (table === 'history') await queryRunner.query(`ALTER SEQUENCE ${s}.history_id_seq OWNED BY ${s}.history_flat.id`);
      await queryRunner.query(`DROP TABLE ${s}.${table}`);
      await queryRunner.query(`ALTER TABLE ${s}.${table}_flat DROP COLUMN run_day`);
      await queryRunner.query(`ALTER TABLE ${s}.${table}_flat RENAME TO ${table}`);
      for (const constraint of constraints) await queryRunner.query(`ALTER TABLE ${s}.${table} ADD ${constraint}`);
    }
    await queryRunner.query(`CREATE INDEX history_run_idx ON ${t.history} (run_id, id)`);
    await queryRunner.query(`CREATE INDEX history_at_brin ON ${t.history} USING brin (at)`);
    await queryRunner.query(`ALTER TABLE ${t.runs} DROP COLUMN run_day`);
  }
}
