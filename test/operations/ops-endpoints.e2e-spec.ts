import { NestFactory } from '@nestjs/core';
import { INestApplication } from '@nestjs/common';
import { databaseUrl, Db, eventually, uniqueSchema } from '../setup/durable-app';
import { opsModule } from './ops-endpoints';

describe("the operations guide's example: /metrics and /health on the app", () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    app = await NestFactory.create(opsModule(databaseUrl(), schema), { logger: false });
    await app.listen(0, '127.0.0.1');
    url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  });
  afterAll(async () => {
    await app.close();
    await db.dropSchema();
  });

  it('serves Prometheus metrics and a terminus health check that includes the durable indicator', async () => {
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toContain('# TYPE durable_runs_started_total counter');
    expect(text).toContain('durable_wakes_overdue 0');
    const health = await eventually(async () => {
      const response = await fetch(`${url}/health`);
      return response.status === 200 && ((await response.json()) as any);
    }, 'the health check to pass (after the first sweep)');
    expect(health).toMatchObject({ status: 'ok', info: { durable: { status: 'up', listener: { up: true } } } });
  });
});
