import { applyDecorators, Body, Controller, Get, HttpCode, Inject, Param, Post, Query, Req, Res, SetMetadata, UseFilters, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { SignalService } from '../client/signal.service';
import { WorkflowClient } from '../client/workflow.client';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { DashboardOptions } from '../interfaces';
import { DashboardAuthGuard, DashboardRequest, MUTATION, SESSION_ROUTE } from './dashboard-auth.guard';
import { DashboardErrorsFilter } from './dashboard-errors.filter';
import { DashboardService } from './dashboard.service';
import { bodyObject, optionalString, requiredKey, requiredString } from './request-body';

/** Marks a route that changes something: read-only mode and the header rule apply. */
const Mutation = () => SetMetadata(MUTATION, true);
/** An action on what exists (not a creation): 200. */
const Action = () => applyDecorators(Mutation(), HttpCode(200));

const actor = (request: DashboardRequest) => request.durableActor ?? 'dashboard';

/** Runs: list, inspect, start, deliver, and the operator actions. Mounted at `${path}/api/runs`. */
@Controller()
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardErrorsFilter)
export class DashboardRunsController {
  constructor(
    private readonly client: WorkflowClient,
    private readonly signals: SignalService,
    private readonly service: DashboardService,
  ) {}

  @Get()
  list(@Query() query: Record<string, string | undefined>) {
    return this.service.list(query);
  }

  @Get(':id')
  detail(@Param('id') id: string) {
    return this.service.detail(id);
  }

  @Post()
  @Mutation()
  async start(@Body() body: unknown, @Req() request: DashboardRequest, @Res({ passthrough: true }) response: Response) {
    const fields = bodyObject(body);
    const workflow = requiredString(fields, 'workflow');
    const handle = await this.client.start(workflow, fields.input ?? null, { runId: optionalString(fields, 'runId'), actor: actor(request) });
    response.status(handle.created ? 201 : 200);
    return { runId: handle.runId, created: handle.created };
  }

  @Post(':id/signals/:name')
  @Mutation()
  async signal(@Param('id') id: string, @Param('name') name: string, @Body() body: unknown, @Req() request: DashboardRequest, @Res({ passthrough: true }) response: Response) {
    const payload = requiredKey(bodyObject(body), 'payload');
    const delivery = await this.signals.signal(id, name, payload, { actor: actor(request) });
    response.status(delivery.accepted ? 201 : 200);
    return delivery;
  }

  @Post(':id/channels/:channel')
  @Mutation()
  async send(@Param('id') id: string, @Param('channel') channel: string, @Body() body: unknown, @Req() request: DashboardRequest, @Res({ passthrough: true }) response: Response) {
    const fields = bodyObject(body);
    const delivery = await this.signals.send(id, channel, requiredString(fields, 'key'), requiredKey(fields, 'payload'), { actor: actor(request) });
    response.status(delivery.accepted ? 201 : 200);
    return delivery;
  }

  @Post(':id/resume')
  @Action()
  async resume(@Param('id') id: string, @Req() request: DashboardRequest) {
    await this.client.resume(id, { actor: actor(request) });
    return { runId: id, status: (await this.client.getRun(id)).status };
  }

  @Post(':id/cancel')
  @Action()
  async cancel(@Param('id') id: string, @Body() body: unknown, @Req() request: DashboardRequest) {
    const reason = body === undefined || body === null || (typeof body === 'object' && Object.keys(body as object).length === 0) ? undefined : optionalString(bodyObject(body), 'reason', 1_000);
    await this.client.cancel(id, reason, { actor: actor(request) });
    return { runId: id, status: (await this.client.getRun(id)).status };
  }

  @Post(':id/retry')
  @Action()
  async retry(@Param('id') id: string, @Req() request: DashboardRequest) {
    await this.client.retry(id, { actor: actor(request) });
    return { runId: id, status: (await this.client.getRun(id)).status };
  }
}

/** Bulk actions over a selection or a filter, each run's outcome reported. Mounted at `${path}/api/bulk`. */
@Controller()
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardErrorsFilter)
export class DashboardBulkController {
  constructor(
    private readonly client: WorkflowClient,
    private readonly signals: SignalService,
    private readonly service: DashboardService,
  ) {}

  @Post('signal')
  @Action()
  async signal(@Body() body: unknown, @Req() request: DashboardRequest) {
    const fields = bodyObject(body);
    const name = requiredString(fields, 'name');
    const payload = requiredKey(fields, 'payload');
    const runIds = await this.service.targets(fields);
    return this.service.bulk(runIds, async (runId) => ((await this.signals.signal(runId, name, payload, { actor: actor(request) })).accepted ? 'accepted' : 'duplicate'));
  }

  @Post('resume')
  @Action()
  async resume(@Body() body: unknown, @Req() request: DashboardRequest) {
    const runIds = await this.service.targets(bodyObject(body));
    return this.service.bulk(runIds, async (runId) => {
      await this.client.resume(runId, { actor: actor(request) });
      return 'accepted';
    });
  }

  @Post('cancel')
  @Action()
  async cancel(@Body() body: unknown, @Req() request: DashboardRequest) {
    const fields = bodyObject(body);
    const reason = optionalString(fields, 'reason', 1_000);
    const runIds = await this.service.targets(fields);
    return this.service.bulk(runIds, async (runId) => {
      await this.client.cancel(runId, reason, { actor: actor(request) });
      return 'accepted';
    });
  }
}

/** Session, workflows and stats. Mounted at `${path}/api`. */
@Controller()
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardErrorsFilter)
export class DashboardMetaController {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly service: DashboardService,
  ) {}

  /** Answers with or without credentials: how to sign in, and whether this request is signed in. */
  @Get('session')
  @SetMetadata(SESSION_ROUTE, true)
  session(@Req() request: DashboardRequest) {
    const dashboard = this.options.dashboard as DashboardOptions;
    const mode = 'token' in dashboard.auth ? 'token' : 'guard' in dashboard.auth ? 'guard' : 'none';
    const authenticated = Boolean(request.durableAuthenticated);
    return { auth: mode, readOnly: Boolean(dashboard.readOnly), authenticated, actor: authenticated ? (request.durableActor ?? null) : null };
  }

  @Get('workflows')
  workflows() {
    return this.service.workflows();
  }

  @Get('stats')
  stats() {
    return this.service.stats();
  }
}
