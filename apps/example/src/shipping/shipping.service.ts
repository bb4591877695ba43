import { Injectable } from '@nestjs/common';
import { Step } from 'nestjs-durable';

/** The carrier's API (a stand-in): label creation and pickup booking, each a step. */
@Injectable()
export class ShippingService {
  /**
   * The order id is the call's idempotency key: a crash between the carrier's answer and the step's
   * checkpoint calls it again, and the carrier answers with the label it made (one parcel, one number).
   */
  @Step('create-label')
  async createLabel(orderId: string): Promise<{ trackingNumber: string }> {
    return { trackingNumber: `TRK-${orderId.toUpperCase()}` };
  }

  @Step('book-pickup')
  async bookPickup(trackingNumber: string): Promise<{ pickupAt: Date }> {
    return { pickupAt: new Date(Date.now() + 3_600_000) };
  }
}
