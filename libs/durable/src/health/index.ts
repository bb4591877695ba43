export { DurableHealthIndicator } from './durable-health.indicator';
