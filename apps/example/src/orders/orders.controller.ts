import { BadRequestException, Body, Controller, Get, Headers, NotFoundException, Param, Post } from '@nestjs/common';
import { InvalidArgumentError, RunNotFoundError, WorkflowClient } from 'nestjs-durable';
import { orderRunId } from './order.contracts';
import { OrdersService } from './orders.service';

/** The largest amount the orders table's integer column holds. */
const MAX_AMOUNT_CENTS = 2_147_483_647;

@Controller('orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly workflows: WorkflowClient,
  ) {}

  /**
   * Checked to the limits of what it feeds: the customer becomes a business key of the run (at most 200
   * characters) and a text column (no NUL), the amount an integer column. Past them the start or the
   * insert threw, a 500. What only the library can tell (a key holding a lone surrogate, say) is its
   * InvalidArgumentError: a 400 too, and the order's transaction rolled back. An `Idempotency-Key`
   * header makes a retried request answer with the order it placed the first time (OrdersService.place).
   */
  @Post()
  async place(@Body() body: { customer?: unknown; amountCents?: unknown }, @Headers('idempotency-key') idempotencyKey?: string) {
    const { customer, amountCents } = body ?? {};
    // A NUL is refused by PostgreSQL's text columns before the library sees the key: checked here.
    if (typeof customer !== 'string' || !customer || customer.length > 200 || customer.includes('\u0000'))
      throw new BadRequestException('customer must be a string of 1 to 200 characters, without NUL.');
    if (idempotencyKey !== undefined && (!idempotencyKey || idempotencyKey.length > 200))
      throw new BadRequestException('The Idempotency-Key header must be 1 to 200 characters.');
    if (!Number.isInteger(amountCents) || (amountCents as number) <= 0 || (amountCents as number) > MAX_AMOUNT_CENTS)
      throw new BadRequestException(`amountCents must be a whole number from 1 to ${MAX_AMOUNT_CENTS}.`);
    try {
      return await this.orders.place({ customer, amountCents: amountCents as number }, idempotencyKey);
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new BadRequestException(error.message);
      throw error;
    }
  }

  /**
   * The run is read first: an ended run's steps committed their writes before it ended, so the order and
   * payments read after it hold them, and the answer never shows an ended run beside an order its last
   * steps had not updated yet (read the other way round, one ended in between).
   */
  @Get(':id')
  async get(@Param('id') id: string) {
    const run = await this.workflows.getRun(orderRunId(id)).catch((error: unknown) => {
      if (error instanceof RunNotFoundError) throw new NotFoundException(`No order ${id}.`);
      throw error;
    });
    const order = await this.orders.find(id);
    if (!order) throw new NotFoundException(`No order ${id}.`);
    const payments = await this.orders.payments(id);
    return {
      order,
      payments,
      run: { runId: run.runId, status: run.status, waiting: run.waiting, deadline: run.deadline, keys: run.keys, output: run.output },
    };
  }
}
