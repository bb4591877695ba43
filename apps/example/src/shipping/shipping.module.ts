import { Module } from '@nestjs/common';
import { ShipOrder } from './ship-order.workflow';
import { ShippingService } from './shipping.service';

@Module({ providers: [ShippingService, ShipOrder] })
export class ShippingModule {}
