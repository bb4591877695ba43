export * from './workflow.decorator';
export * from './step.decorator';
