import { BadRequestException, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { InvalidArgumentError, InvalidPayloadError, RunClosedError, RunNotFoundError, SignalService, WorkflowClient } from 'nestjs-durable';
import { CarrierEvents, DeliveryFeedback, orderRunId } from '../orders/order.contracts';
import { FulfillOrder } from '../orders/fulfill-order.workflow';

/**
 * Where outside systems call in. Providers retry webhooks, so each delivery is keyed: a redelivery is
 * answered 200 with `accepted: false`, never an error, and is applied to the run at most once.
 */
@Controller('webhooks')
export class WebhooksController {
  constructor(
    private readonly signals: SignalService,
    private readonly workflows: WorkflowClient,
  ) {}

  /**
   * The carrier's tracking events: a channel message keyed by the carrier's event id. The carrier
   * names the parcel by its tracking number (or, from our own tools, by order id): the run is found by
   * the business key the workflow set, with no lookup table of the app's own.
   */
  @Post('carrier')
  @HttpCode(200)
  async carrier(@Body() body: { orderId?: string; trackingNumber?: string; eventId?: string; event?: string; at?: string }) {
    if (!(body?.orderId || body?.trackingNumber) || !body.eventId)
      throw new BadRequestException('Send { trackingNumber or orderId, eventId, event, at }.');
    return this.deliver(async () => {
      const runId = body.orderId ? orderRunId(body.orderId) : await this.runByTracking(body.trackingNumber!);
      return this.signals.send(runId, CarrierEvents, body.eventId!, {
        event: body.event as never,
        at: body.at ?? new Date().toISOString(),
      });
    });
  }

  /** The customer's rating: a typed signal to the order's run, found by its `orderId` key; first delivery wins. */
  @Post('feedback')
  @HttpCode(200)
  async feedback(@Body() body: { orderId?: string; rating?: number; comment?: string }) {
    if (!body?.orderId) throw new BadRequestException('Send { orderId, rating, comment? }.');
    return this.deliver(async () => {
      const [delivery] = await this.signals.signalByKeys(
        { orderId: body.orderId! },
        DeliveryFeedback,
        { rating: body.rating as number, comment: body.comment },
        { workflow: FulfillOrder, fanOut: 'one' },
      );
      if (delivery) return delivery;
      // signalByKeys passes over runs that ended: say which it was (getRun: RunNotFoundError when there is none).
      const run = await this.workflows.getRun(orderRunId(body.orderId!));
      throw new RunClosedError(run.runId, run.status);
    });
  }

  /**
   * Whatever the run's status: a pending one (handed back by an instance shutting down) or a failed one
   * (an operator may retry it) keeps the message, and a closed one answers so.
   */
  private async runByTracking(trackingNumber: string): Promise<string> {
    const { runs } = await this.workflows.listRuns({ keys: { trackingNumber }, limit: 1 });
    if (!runs.length) throw new RunNotFoundError(`tracking:${trackingNumber}`);
    return runs[0].runId;
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
      if (error instanceof InvalidArgumentError) throw new BadRequestException(error.message);
      throw error;
    }
  }
}
