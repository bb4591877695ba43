import { Global, Module } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { config } from '../config';
import { Order } from '../orders/order.entity';
import { Payment } from '../payments/payment.entity';
import { CreateOrders1732950000000 } from './migrations/1732950000000-create-orders';

/**
 * The application's own DataSource. DurableModule is given this same DataSource, so an order row and
 * the run that fulfils it can be written in one transaction.
 */
@Global()
@Module({
  providers: [
    {
      provide: DataSource,
      useFactory: async () => {
        const dataSource = new DataSource({
          type: 'postgres',
          url: config.databaseUrl,
          entities: [Order, Payment],
          // DurableModule executes runs on this pool too: its worker's slots (10 by default) plus a few
          // for the app's requests, lease renewals and sweeps (docs/guides/transactions.md).
          poolSize: 15,
          migrations: [CreateOrders1732950000000],
          migrationsRun: true,
        });
        return dataSource.initialize();
      },
    },
  ],
  exports: [DataSource],
})
export class DatabaseModule {}
