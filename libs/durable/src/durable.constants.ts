/** Metadata keys set by the decorators and read by the explorer. */
export const WORKFLOW_METADATA = 'nestjs-durable:workflow';
export const STEP_METADATA = 'nestjs-durable:step';

/** Injection tokens. */
export const DURABLE_OPTIONS = Symbol('DURABLE_OPTIONS');
/** The module's TypeORM DataSource: `@Inject(DURABLE_DATA_SOURCE)`. */
export const DURABLE_DATA_SOURCE = 'DURABLE_DATA_SOURCE';

/** The NOTIFY channel every instance LISTENs on; the payload is a run id. */
export const wakeChannel = (schema: string) => `nestjs_durable_${schema}`;
