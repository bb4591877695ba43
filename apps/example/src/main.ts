import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { config } from './config';
import { SeedService } from './seed/seed.service';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks();
  await app.listen(config.port);
  if (process.argv.includes('--seed')) await app.get(SeedService).seed();

  const base = `http://localhost:${config.port}`;
  const login =
    config.dashboardAuth === 'guard' ? `sign in at ${base}/admin/login?key=${config.adminKey}` : `paste the token ${config.dashboardToken}`;
  new Logger('Example').log(
    [
      '',
      `  App:        ${base}  (POST /orders, GET /orders/:id, POST /webhooks/carrier, POST /webhooks/feedback)`,
      `  Dashboard:  ${base}/durable/  (${login})`,
      `  Try:        curl -X POST ${base}/orders -H 'content-type: application/json' -d '{"customer":"Ada","amountCents":125000}'`,
      '',
    ].join('\n'),
  );
}

void bootstrap();
