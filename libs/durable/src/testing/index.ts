export { DurableTestingModule } from './durable-testing.module';
export type { DurableTestingOptions } from './durable-testing.module';
export { DurableTestClock } from './durable-test-clock';
