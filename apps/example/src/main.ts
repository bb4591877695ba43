import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { config } from './config';
import { ExampleLogger } from './example.logger';
import { SEEDED_FAILURES, SeedService } from './seed/seed.service';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule, { logger: new ExampleLogger() });
  app.enableShutdownHooks();
  await app.listen(config.port);
  if (process.argv.includes('--seed')) await app.get(SeedService).seed();

  const base = `http://localhost:${config.port}`;
  const { dashboardToken } = config;
  const login = !dashboardToken
    ? `sign in at ${base}/admin/login?key=${config.adminKey}`
    : dashboardToken.file
      ? `paste the token ${dashboardToken.token}, kept in ${dashboardToken.file}; set DASHBOARD_TOKEN to choose it`
      : `paste the token ${dashboardToken.token}, from DASHBOARD_TOKEN`;
  new Logger('Example').log(
    [
      '',
      `  App:        ${base}  (POST /orders, GET /orders/:id, POST /webhooks/carrier, POST /webhooks/feedback)`,
      `  Dashboard:  ${base}/durable/  (${login})`,
      `  Try:        curl -X POST ${base}/orders -H 'content-type: application/json' -d '{"customer":"Ada","amountCents":125000}'`,
      `  Expected:   the runs seeded by \`npm start -- --seed\` that warn or fail do so on purpose, to show the dashboard's failure views:`,
      ...SEEDED_FAILURES.map((run) => `              ${run}`),
      '',
    ].join('\n'),
  );
}

void bootstrap();
