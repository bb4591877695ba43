import { Registry } from 'prom-client';
import { Metrics } from 'nestjs-durable/observability/metrics';
import { eventually } from '../setup/durable-app';

describe("the metrics' gauges", () => {
  it('a gauge query whose answer never comes (lost on the network) is given up after the statement timeout, and the next scrape asks again', async () => {
    const registry = new Registry();
    let queries = 0;
    // The first query never settles, as one whose answer was lost; the next ones answer.
    const gauges = () => (++queries === 1 ? new Promise<never>(() => undefined) : Promise.resolve({ waiting: {}, overdue: 7 }));
    new Metrics({ registry, prefix: 'durable_', abandonAfterMs: 300 }, gauges);
    expect(await registry.metrics()).toMatch(/^durable_wakes_overdue nan$/im); // after the gauges' wait of two seconds
    await eventually(async () => /^durable_wakes_overdue 7$/m.test(await registry.metrics()), 'a scrape that asked again');
    expect(queries).toBe(2);
  });
});
