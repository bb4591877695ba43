import { BadRequestException, Body, Controller, Get, NotFoundException, Param, Post } from '@nestjs/common';
import { WorkflowClient } from 'nestjs-durable';
import { orderRunId } from './order.contracts';
import { OrdersService } from './orders.service';

@Controller('orders')
export class OrdersController {
  constructor(
    private readonly orders: OrdersService,
    private readonly workflows: WorkflowClient,
  ) {}

  @Post()
  place(@Body() body: { customer?: unknown; amountCents?: unknown }) {
    if (typeof body?.customer !== 'string' || !body.customer || !Number.isInteger(body.amountCents) || (body.amountCents as number) <= 0) {
      throw new BadRequestException('Send { customer: string, amountCents: positive integer }.');
    }
    return this.orders.place({ customer: body.customer, amountCents: body.amountCents as number });
  }

  @Get(':id')
  async get(@Param('id') id: string) {
    const order = await this.orders.find(id);
    if (!order) throw new NotFoundException(`No order ${id}.`);
    const run = await this.workflows.getRun(orderRunId(id));
    const payments = await this.orders.payments(id);
    return {
      order,
      payments,
      run: { runId: run.runId, status: run.status, waiting: run.waiting, deadline: run.deadline, keys: run.keys, output: run.output },
    };
  }
}
