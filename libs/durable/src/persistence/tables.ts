import { InvalidArgumentError } from '../errors';

/** Schema-qualified, quoted table names; every SQL text is built from these once, at boot. */
export interface Tables {
  schema: string;
  runs: string;
  steps: string;
  signals: string;
  messages: string;
  history: string;
  instances: string;
  schedules: string;
  scheduleSkips: string;
  queueSlots: string;
  /** A function: does this run (a slot's holder) still execute? Read with a snapshot of its own. */
  queueSlotHeld: string;
  /** A function: lock a free slot of a queue (SKIP LOCKED) and return its number, or null. Reads with a snapshot of its own. */
  queueSlotTake: string;
  /** A function: lock up to n free slots of a queue (SKIP LOCKED) and return their numbers. Reads with snapshots of its own. */
  queueSlotsTake: string;
  /** A function: a run's journal, read from its day's partition alone (see the partitioned-journal migration). */
  journalOf: string;
  /** A function: the journals of several runs, one read per day of runs (the batched-journal-reads migration). */
  journalsOf: string;
  /** A function, with its owner's rights: makes the journal's partitions of a range of days. */
  makeJournalPartitions: string;
  /** A function, with its owner's rights: analyzes the runs table when its statistics are due (the run-statistics migration). */
  analyzeRunsIfDue: string;
}

/**
 * A schema name: an identifier of at most 48 characters, so that its wake channel
 * (`nestjs_durable_<schema>`, durable.constants.ts) fits in Postgres' 63 bytes: with a longer one every
 * statement that notifies failed ('channel name too long').
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,47}$/;

export function tablesFor(schema: string): Tables {
  if (!IDENTIFIER.test(schema)) {
    throw new InvalidArgumentError(
      `schema "${schema}" is not usable: use lower-case letters, digits and underscores, starting with a letter or underscore, at most 48 (its NOTIFY channel, nestjs_durable_<schema>, must fit in Postgres' 63 bytes).`,
    );
  }
  const q = (table: string) => `"${schema}"."${table}"`;
  return {
    schema,
    runs: q('runs'),
    steps: q('steps'),
    signals: q('signals'),
    messages: q('messages'),
    history: q('history'),
    instances: q('instances'),
    schedules: q('schedules'),
    scheduleSkips: q('schedule_skips'),
    queueSlots: q('queue_slots'),
    queueSlotHeld: q('queue_slot_held'),
    queueSlotTake: q('take_queue_slot'),
    queueSlotsTake: q('take_queue_slots'),
    journalOf: q('journal_of'),
    journalsOf: q('journals_of'),
    makeJournalPartitions: q('make_journal_partitions'),
    analyzeRunsIfDue: q('analyze_runs_if_due'),
  };
}

/** The schema a migration runs in: the `schema` option of the migrating DataSource. */
export function schemaOf(queryRunner: { connection: { options: object } }): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'durable';
}
