import { Module } from '@nestjs/common';
import { PaymentsService } from '../payments/payments.service';
import { ShippingModule } from '../shipping/shipping.module';
import { FulfillOrder } from './fulfill-order.workflow';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';
import { ReconcileUnpaidOrders } from './reconcile-unpaid-orders.workflow';

@Module({
  imports: [ShippingModule],
  controllers: [OrdersController],
  providers: [OrdersService, PaymentsService, FulfillOrder, ReconcileUnpaidOrders],
  exports: [OrdersService],
})
export class OrdersModule {}
