import { Injectable } from '@nestjs/common';
import { Step } from 'nestjs-durable';

/** The carrier's API (a stand-in): label creation and pickup booking, each a step. */
@Injectable()
export class ShippingService {
  @Step('create-label')
  async createLabel(orderId: string): Promise<{ trackingNumber: string }> {
    return { trackingNumber: `TRK-${orderId.toUpperCase()}-${Date.now().toString(36).toUpperCase()}` };
  }

  @Step('book-pickup')
  async bookPickup(trackingNumber: string): Promise<{ pickupAt: Date }> {
    return { pickupAt: new Date(Date.now() + 3_600_000) };
  }
}
