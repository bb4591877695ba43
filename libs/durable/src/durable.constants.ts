import { createHash } from 'node:crypto';

/** Metadata keys set by the decorators and read by the explorer. */
export const WORKFLOW_METADATA = 'nestjs-durable:workflow';
export const STEP_METADATA = 'nestjs-durable:step';

/** Injection tokens. */
export const DURABLE_OPTIONS = Symbol('DURABLE_OPTIONS');
/** The runtime's ChildStarter (runtime/child-starter.ts), bound by the module to the run starter. */
export const CHILD_STARTER = Symbol('nestjs-durable:child-starter');
/** The module's TypeORM DataSource: `@Inject(DURABLE_DATA_SOURCE)`. */
export const DURABLE_DATA_SOURCE = 'DURABLE_DATA_SOURCE';

/** The NOTIFY channel every instance LISTENs on; the payload is a run id. A schema has at most 48 characters, so it fits. */
export const wakeChannel = (schema: string) => `nestjs_durable_${schema}`;
/**
 * A channel named after the wake channel, as is while it fits in Postgres' 63 bytes (NOTIFY refuses a
 * longer one), else by a hash of that name: a schema of 42 to 48 characters, whose queue channel failed
 * every notifying statement before 2026-12-05.
 */
const beside = (schema: string, suffix: string) => {
  const name = `${wakeChannel(schema)}${suffix}`;
  return name.length <= 63 ? name : `nestjs_durable_${createHash('md5').update(name).digest('hex')}`;
};
/**
 * The NOTIFY channel of new queued runs: the payload is the queue's name, so an instance admits from
 * that queue at once, without a plain claim or a look at the other queues.
 */
export const queueChannel = (schema: string) => beside(schema, ':queues');
/**
 * The NOTIFY channel of a change made to a run while it executes (a cancel, a new deadline): the payload
 * is a run id, and the instance executing it renews its leases at once, which tells the execution.
 */
export const controlChannel = (schema: string) => beside(schema, ':control');

/** The journal key of a run's passing of its deadline (the awaited call it was thrown at); an operator's new deadline deletes it. */
export const DEADLINE_PASSED_KEY = 'run-deadline:passed';

/**
 * The format of the runs this version inserts (runs.key_format; its default, 1, is the one before): from
 * 2, checkpoint keys escape the names in them (runtime/checkpoint-keys); from 3, a timed signal wait
 * decides by the signal's delivery time once its deadline is journaled (primitives/signals). A run keeps
 * its format, so one in flight across an upgrade is re-executed as it was first decided.
 */
export const KEY_FORMAT = 3;

/** The longest reason a cancel takes (WorkflowClient.cancel and the REST API): it is stored on every run its cascade reaches. */
export const MAX_CANCEL_REASON = 1_000;
