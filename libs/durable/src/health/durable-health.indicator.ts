import { Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import { DurableHealth } from './durable-health';

/**
 * A @nestjs/terminus indicator: up when the database answers, migrations are current, LISTEN is alive
 * and the sweeper ticks; down with the failing parts otherwise.
 *
 *   @Get('health') @HealthCheck()
 *   check() { return this.health.check([() => this.durable.isHealthy()]); }
 */
@Injectable()
export class DurableHealthIndicator {
  constructor(
    private readonly health: DurableHealth,
    private readonly indicators: HealthIndicatorService,
  ) {}

  async isHealthy(key = 'durable') {
    const indicator = this.indicators.check(key);
    const report = await this.health.check();
    const { healthy, ...details } = report;
    return healthy ? indicator.up(details) : indicator.down(details);
  }
}
