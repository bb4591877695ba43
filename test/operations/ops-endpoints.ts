import { Controller, Get, Header, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Registry } from 'prom-client';
import { DurableModule } from 'nestjs-durable';
import { DurableHealthIndicator } from 'nestjs-durable/health';

/** The operations guide's example, booted by ops-endpoints.e2e-spec.ts. */
export function opsModule(connection: string, schema: string) {
  // #region ops-endpoints
  const registry = new Registry(); // or prom-client's global `register`

  @Controller()
  class OpsController {
    constructor(
      private readonly health: HealthCheckService,
      private readonly durable: DurableHealthIndicator,
    ) {}

    @Get('metrics')
    @Header('content-type', registry.contentType)
    metrics() {
      return registry.metrics();
    }

    @Get('health')
    @HealthCheck()
    check() {
      return this.health.check([() => this.durable.isHealthy()]);
    }
  }

  @Module({
    imports: [
      TerminusModule,
      DurableModule.forRoot({
        connection,
        schema,
        metrics: { registry },
        retention: { completed: '30d', failed: '90d', cancelled: '30d' },
        statementTimeoutMs: 30_000,
      }),
    ],
    controllers: [OpsController],
    providers: [DurableHealthIndicator],
  })
  class OpsModule {}
  // #endregion
  return OpsModule;
}
