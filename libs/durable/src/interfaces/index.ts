export * from './duration.interface';
export * from './retry-policy.interface';
export * from './payload-schema.interface';
export * from './module-options.interface';
export * from './run.interface';
export * from './workflow.interface';
export * from './schedule.interface';
export * from './queue.interface';
