import { BadRequestException, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { InvalidPayloadError, RunClosedError, RunNotFoundError, SignalService } from 'nestjs-durable';
import { CarrierEvents, DeliveryFeedback, orderRunId } from '../orders/order.contracts';

/**
 * Where outside systems call in. Providers retry webhooks, so each delivery is keyed: a redelivery is
 * answered 200 with `accepted: false`, never an error, and is applied to the run at most once.
 */
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly signals: SignalService) {}

  /** The carrier's tracking events: a channel message keyed by the carrier's event id. */
  @Post('carrier')
  @HttpCode(200)
  async carrier(@Body() body: { orderId?: string; eventId?: string; event?: string; at?: string }) {
    if (!body?.orderId || !body.eventId) throw new BadRequestException('Send { orderId, eventId, event, at }.');
    return this.deliver(() =>
      this.signals.send(orderRunId(body.orderId!), CarrierEvents, body.eventId!, {
        event: body.event as never,
        at: body.at ?? new Date().toISOString(),
      }),
    );
  }

  /** The customer's rating: a typed signal, first delivery wins. */
  @Post('feedback')
  @HttpCode(200)
  async feedback(@Body() body: { orderId?: string; rating?: number; comment?: string }) {
    if (!body?.orderId) throw new BadRequestException('Send { orderId, rating, comment? }.');
    return this.deliver(() =>
      this.signals.signal(orderRunId(body.orderId!), DeliveryFeedback, { rating: body.rating as number, comment: body.comment }),
    );
  }

  private async deliver(send: () => Promise<{ accepted: boolean }>) {
    try {
      const { accepted } = await send();
      return { accepted };
    } catch (error) {
      // The order moved on (or never existed): a late or stray webhook is acknowledged, not retried forever.
      if (error instanceof RunClosedError) return { accepted: false, reason: 'the order is already closed' };
      if (error instanceof RunNotFoundError) return { accepted: false, reason: 'no such order' };
      if (error instanceof InvalidPayloadError) throw new BadRequestException({ message: error.message, issues: error.issues });
      throw error;
    }
  }
}
