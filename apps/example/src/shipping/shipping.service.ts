import { Injectable } from '@nestjs/common';
import { Step } from 'nestjs-durable';
import { config } from '../config';
import { ParcelRefusedError } from './parcel-refused.error';

/** The carrier's API (a stand-in): label creation and pickup booking, each a step. */
@Injectable()
export class ShippingService {
  /**
   * The order id is the call's idempotency key: a crash between the carrier's answer and the step's
   * checkpoint calls it again, and the carrier answers with the label it made (one parcel, one number).
   * A parcel worth more than the carrier insures is refused (ParcelRefusedError, which no retry changes).
   */
  @Step('create-label')
  async createLabel(orderId: string, valueCents: number): Promise<{ trackingNumber: string }> {
    if (valueCents > config.carrierInsuranceLimitCents)
      throw new ParcelRefusedError(
        `The carrier insures parcels up to ${(config.carrierInsuranceLimitCents / 100).toFixed(2)}; order ${orderId} is worth ${(valueCents / 100).toFixed(2)}.`,
      );
    return { trackingNumber: `TRK-${orderId.toUpperCase()}` };
  }

  @Step('book-pickup')
  async bookPickup(trackingNumber: string): Promise<{ pickupAt: Date }> {
    return { pickupAt: new Date(Date.now() + 3_600_000) };
  }
}
