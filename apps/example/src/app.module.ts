import { Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DurableModule } from 'nestjs-durable';
import { AdminController } from './admin/admin.controller';
import { AdminGuard } from './admin/admin.guard';
import { config } from './config';
import { DatabaseModule } from './database/database.module';
import { InventoryModule } from './inventory/inventory.module';
import { OrdersModule } from './orders/orders.module';
import { SeedService } from './seed/seed.service';
import { WebhooksController } from './webhooks/webhooks.controller';

@Module({
  imports: [
    DatabaseModule,
    // The app's own DataSource, so orders and their runs share transactions.
    DurableModule.forRootAsync({
      inject: [DataSource],
      useFactory: (dataSource: DataSource) => ({
        connection: dataSource,
        // The carrier's API takes 4 calls at once for the whole account and 100 a minute (see ShipOrder).
        queues: { carrier: { concurrency: 4, rateLimit: { limit: 100, period: '1m' } } },
        dashboard: { auth: config.dashboardToken ? { token: config.dashboardToken.token } : { guard: AdminGuard } },
      }),
    }),
    OrdersModule,
    InventoryModule,
  ],
  controllers: [WebhooksController, AdminController],
  providers: [SeedService],
})
export class AppModule {}
