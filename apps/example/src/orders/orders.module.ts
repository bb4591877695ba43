import { Module } from '@nestjs/common';
import { PaymentsService } from '../payments/payments.service';
import { ShippingModule } from '../shipping/shipping.module';
import { FulfillOrder } from './fulfill-order.workflow';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';

@Module({
  imports: [ShippingModule],
  controllers: [OrdersController],
  providers: [OrdersService, PaymentsService, FulfillOrder],
  exports: [OrdersService],
})
export class OrdersModule {}
