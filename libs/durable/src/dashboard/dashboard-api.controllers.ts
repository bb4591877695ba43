import {
  All,
  Controller,
  Get,
  HttpException,
  Inject,
  MessageEvent,
  NotFoundException,
  Param,
  Post,
  Req,
  RequestMethod,
  Res,
  SetMetadata,
  Sse,
  Type,
  UseFilters,
  UseGuards,
} from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { Observable } from 'rxjs';
import { z } from 'zod';
import { SignalService } from '../client/signal.service';
import { WorkflowClient } from '../client/workflow.client';
import { DURABLE_OPTIONS, MAX_CANCEL_REASON } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { DashboardOptions, Duration, RunFilter } from '../interfaces';
import { isRunCursor, RUN_STATUSES } from '../persistence/run.repository';
import { WAIT_KIND_NAMES } from '../wait-kinds/wait-kind.registry';
import { businessKeys, duration, endpoint, EndpointInput, Input, instant, oneOf, pageLimit, present, text } from './api-input';
import { HISTORY_PAGE } from '../persistence/dashboard.repository';
import { checkKeys } from '../schema/business-keys';
import { DashboardAuthGuard, DashboardRequest, SESSION_ROUTE } from './dashboard-auth.guard';
import { DashboardErrorsFilter, MethodNotAllowed } from './dashboard-errors.filter';
import { DashboardService } from './dashboard.service';
import { RunChangeFeed } from './run-change-feed';
import { Action, actor, Mutation, noBody } from './dashboard-routes';
import { DashboardSchedulesController } from './dashboard-schedules.controller';

/** What a handler sets on its response, the same on Express and Fastify: the status. */
interface StatusReply {
  status(code: number): unknown;
}

// The inputs' parts that several endpoints share. Each endpoint's declaration sits above its route.

const runId = { id: text() };
/** Statuses as a list: repeated (`status=a&status=b`), comma-separated, or both. */
const statuses = z.preprocess(
  (given) =>
    given === undefined
      ? undefined
      : [given]
          .flat()
          .filter((s) => s !== undefined)
          .flatMap((s) => (typeof s === 'string' ? s.split(',') : [s])),
  // At least one: an empty list would mean any status, widening a bulk action's filter to every run.
  z.array(oneOf(RUN_STATUSES)).min(1, 'must name at least one status').optional(),
);
const filterFields = {
  status: statuses,
  workflow: text(200).optional(),
  waitingFor: oneOf(WAIT_KIND_NAMES).optional(),
  signal: text(200).optional(),
  schedule: text(120).optional(),
  queue: text(100).optional(),
  forkedFrom: text(1_000).optional(),
  keys: businessKeys().optional(),
  createdAfter: instant().optional(),
  createdBefore: instant().optional(),
  updatedAfter: instant().optional(),
  updatedBefore: instant().optional(),
};
/**
 * The query's `key.<name>=<value>` parameters gathered into `keys`, checked here: a name such as
 * `__proto__` would vanish from a plain object (and with it the filter), so they go into one without
 * a prototype and are refused by name.
 */
const gatherKeys = (query: unknown) => {
  const gathered: Record<string, unknown> = {};
  const keys: Record<string, unknown> = Object.create(null);
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    // An empty value is one (a business key may be ''), not a parameter left out as other empty ones are.
    if (name.startsWith('key.')) keys[name.slice('key.'.length)] = value ?? '';
    else gathered[name] = value;
  }
  return Object.keys(keys).length ? { ...gathered, keys: checkKeys(keys, 'The key filter') } : gathered;
};
const toRunFilter = <F extends { status?: RunFilter['status']; signal?: string }>({ signal, ...filter }: F) => ({
  ...filter,
  waitingName: signal,
});
/** A bulk action's targets: given run ids, or a filter's matches. */
const targets = {
  runIds: z.array(text(1_000)).min(1, 'must list at least one run id').max(1_000, 'must list at most 1000 run ids').optional(),
  filter: z.strictObject(filterFields).transform(toRunFilter).optional(),
};
const oneTarget = (body: { runIds?: unknown; filter?: unknown }) => (body.runIds === undefined) !== (body.filter === undefined);
const ONE_TARGET = { error: 'give either "runIds" or "filter", not both and not neither' };

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

  static readonly list = endpoint({
    query: z
      .preprocess(
        gatherKeys,
        z.strictObject({
          ...filterFields,
          q: text(200).optional(),
          limit: pageLimit(500).optional(),
          sort: oneOf(['created', 'updated'] as const).optional(),
          order: oneOf(['desc', 'asc'] as const).optional(),
          cursor: z
            .string()
            .refine((c) => c.split('_').length <= 2 && c.split('_').every(isRunCursor), 'is not a cursor returned by GET /runs')
            .optional(),
        }),
      )
      .transform(toRunFilter),
  });
  @Get()
  list(@Input(DashboardRunsController.list) { query }: EndpointInput<typeof DashboardRunsController.list>) {
    return this.service.list(query);
  }

  static readonly detail = endpoint({ params: z.strictObject(runId) });
  @Get(':id')
  detail(@Input(DashboardRunsController.detail) { params }: EndpointInput<typeof DashboardRunsController.detail>) {
    return this.service.detail(params.id);
  }

  static readonly history = endpoint({
    params: z.strictObject(runId),
    query: z.strictObject({
      before: z
        .string()
        .refine(
          (s) => /^[1-9]\d{0,18}$/.test(s) && BigInt(s) <= 9223372036854775807n,
          'must be a history id (a whole number) from GET /runs/:id',
        ),
      limit: pageLimit(HISTORY_PAGE).optional(),
    }),
  });
  @Get(':id/history')
  history(@Input(DashboardRunsController.history) { params, query }: EndpointInput<typeof DashboardRunsController.history>) {
    return this.service.history(params.id, query.before, query.limit);
  }

  static readonly start = endpoint({
    body: z
      .strictObject({
        workflow: text(200),
        input: z.unknown().optional(),
        runId: text(200).nullish(),
        startAt: instant().optional(),
        delay: duration().optional(),
        timeout: duration().optional(),
        deadline: instant().optional(),
        timeoutIncludesQueue: z.boolean().optional(),
        keys: filterFields.keys,
      })
      .refine((body) => body.startAt === undefined || body.delay === undefined, {
        error: 'give either "startAt" or "delay", not both',
      })
      .refine((body) => body.timeout === undefined || body.deadline === undefined, {
        error: 'give either "timeout" or "deadline", not both',
      }),
  });
  @Post()
  @Mutation()
  async start(
    @Input(DashboardRunsController.start) { body }: EndpointInput<typeof DashboardRunsController.start>,
    @Req() request: DashboardRequest,
    @Res({ passthrough: true }) response: StatusReply,
  ) {
    const handle = await this.client.start(body.workflow, body.input ?? null, {
      runId: body.runId ?? undefined,
      startAt: body.startAt,
      delay: body.delay as Duration | undefined,
      timeout: body.timeout as Duration | undefined,
      deadline: body.deadline,
      timeoutIncludesQueue: body.timeoutIncludesQueue,
      keys: body.keys,
      actor: actor(request),
    });
    response.status(handle.created ? 201 : 200);
    return { runId: handle.runId, created: handle.created };
  }

  static readonly signal = endpoint({ params: z.strictObject({ ...runId, name: text(200) }), body: z.strictObject({ payload: present }) });
  @Post(':id/signals/:name')
  @Mutation()
  async signal(
    @Input(DashboardRunsController.signal) { params, body }: EndpointInput<typeof DashboardRunsController.signal>,
    @Req() request: DashboardRequest,
    @Res({ passthrough: true }) response: StatusReply,
  ) {
    const delivery = await this.signals.signal(params.id, params.name, body.payload, { actor: actor(request) });
    response.status(delivery.accepted ? 201 : 200);
    return delivery;
  }

  static readonly send = endpoint({
    params: z.strictObject({ ...runId, channel: text(200) }),
    body: z.strictObject({ key: text(200), payload: present }),
  });
  @Post(':id/channels/:channel')
  @Mutation()
  async send(
    @Input(DashboardRunsController.send) { params, body }: EndpointInput<typeof DashboardRunsController.send>,
    @Req() request: DashboardRequest,
    @Res({ passthrough: true }) response: StatusReply,
  ) {
    const delivery = await this.signals.send(params.id, params.channel, body.key, body.payload, { actor: actor(request) });
    response.status(delivery.accepted ? 201 : 200);
    return delivery;
  }

  static readonly resume = endpoint({ params: z.strictObject(runId), body: noBody });
  @Post(':id/resume')
  @Action()
  async resume(
    @Input(DashboardRunsController.resume) { params }: EndpointInput<typeof DashboardRunsController.resume>,
    @Req() request: DashboardRequest,
  ) {
    const resumed = await this.client.resume(params.id, { actor: actor(request) });
    return { runId: params.id, status: (await this.client.getRun(params.id)).status, resumed };
  }

  static readonly cancel = endpoint({
    params: z.strictObject(runId),
    body: z.strictObject({ reason: text(MAX_CANCEL_REASON).nullish() }).optional(),
  });
  @Post(':id/cancel')
  @Action()
  async cancel(
    @Input(DashboardRunsController.cancel) { params, body }: EndpointInput<typeof DashboardRunsController.cancel>,
    @Req() request: DashboardRequest,
  ) {
    await this.client.cancel(params.id, body?.reason ?? undefined, { actor: actor(request) });
    return { runId: params.id, status: (await this.client.getRun(params.id)).status };
  }

  static readonly deadline = endpoint({ params: z.strictObject(runId), body: z.strictObject({ deadline: instant().nullable() }) });
  @Post(':id/deadline')
  @Action()
  async setDeadline(
    @Input(DashboardRunsController.deadline) { params, body }: EndpointInput<typeof DashboardRunsController.deadline>,
    @Req() request: DashboardRequest,
  ) {
    await this.client.setDeadline(params.id, body.deadline, { actor: actor(request) });
    const run = await this.client.getRun(params.id);
    return { runId: params.id, status: run.status, deadline: run.deadline ?? null };
  }

  static readonly fork = endpoint({
    params: z.strictObject(runId),
    body: z.strictObject({
      fromStep: text(10_000),
      signals: oneOf(['before', 'all'] as const).optional(),
      runId: text(200).optional(),
      input: z.unknown().optional(),
    }),
  });
  @Post(':id/fork')
  @Mutation()
  async fork(
    @Input(DashboardRunsController.fork) { params, body }: EndpointInput<typeof DashboardRunsController.fork>,
    @Req() request: DashboardRequest,
    @Res({ passthrough: true }) response: StatusReply,
  ) {
    const fork = await this.client.fork(params.id, { ...body, actor: actor(request) });
    response.status(201);
    return { runId: fork.runId, forkedFrom: params.id };
  }

  static readonly retry = endpoint({ params: z.strictObject(runId), body: noBody });
  @Post(':id/retry')
  @Action()
  async retry(
    @Input(DashboardRunsController.retry) { params }: EndpointInput<typeof DashboardRunsController.retry>,
    @Req() request: DashboardRequest,
  ) {
    await this.client.retry(params.id, { actor: actor(request) });
    return { runId: params.id, status: (await this.client.getRun(params.id)).status };
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

  static readonly signal = endpoint({
    body: z.strictObject({ ...targets, name: text(200), payload: present }).refine(oneTarget, ONE_TARGET),
  });
  @Post('signal')
  @Action()
  async signal(
    @Input(DashboardBulkController.signal) { body }: EndpointInput<typeof DashboardBulkController.signal>,
    @Req() request: DashboardRequest,
  ) {
    const runIds = await this.service.targets(body);
    return this.service.bulk(runIds, async (runId) =>
      (await this.signals.signal(runId, body.name, body.payload, { actor: actor(request) })).accepted ? 'accepted' : 'duplicate',
    );
  }

  static readonly resume = endpoint({ body: z.strictObject(targets).refine(oneTarget, ONE_TARGET) });
  @Post('resume')
  @Action()
  async resume(
    @Input(DashboardBulkController.resume) { body }: EndpointInput<typeof DashboardBulkController.resume>,
    @Req() request: DashboardRequest,
  ) {
    const runIds = await this.service.targets(body);
    return this.service.bulk(runIds, async (runId) =>
      (await this.client.resume(runId, { actor: actor(request) })) ? 'accepted' : 'unchanged',
    );
  }

  static readonly cancel = endpoint({
    body: z.strictObject({ ...targets, reason: text(MAX_CANCEL_REASON).nullish() }).refine(oneTarget, ONE_TARGET),
  });
  @Post('cancel')
  @Action()
  async cancel(
    @Input(DashboardBulkController.cancel) { body }: EndpointInput<typeof DashboardBulkController.cancel>,
    @Req() request: DashboardRequest,
  ) {
    const runIds = await this.service.targets(body);
    return this.service.bulk(runIds, async (runId) => {
      await this.client.cancel(runId, body.reason ?? undefined, { actor: actor(request) });
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
    private readonly feed: RunChangeFeed,
  ) {}

  /** No parameter and no body: what the endpoints below take. */
  static readonly nothing = endpoint({});

  /** Answers with or without credentials: how to sign in, and whether this request is signed in. */
  @Get('session')
  @SetMetadata(SESSION_ROUTE, true)
  session(@Input(DashboardMetaController.nothing) _: unknown, @Req() request: DashboardRequest) {
    const dashboard = this.options.dashboard as DashboardOptions;
    const mode = 'token' in dashboard.auth ? 'token' : 'guard' in dashboard.auth ? 'guard' : 'none';
    const authenticated = Boolean(request.durableAuthenticated);
    return {
      auth: mode,
      readOnly: Boolean(dashboard.readOnly),
      authenticated,
      actor: authenticated ? (request.durableActor ?? null) : null,
    };
  }

  @Get('workflows')
  workflows(@Input(DashboardMetaController.nothing) _: unknown) {
    return this.service.workflows();
  }

  @Get('stats')
  stats(@Input(DashboardMetaController.nothing) _: unknown) {
    return this.service.stats();
  }

  @Get('queues')
  queues(@Input(DashboardMetaController.nothing) _: unknown) {
    return this.service.queueViews();
  }

  /** The journal by day: what retention keeps, why, and what it takes on disk. */
  @Get('journal')
  journal(@Input(DashboardMetaController.nothing) _: unknown) {
    return this.service.journalDays();
  }

  static readonly activity = endpoint({ query: z.strictObject({ range: oneOf(['1h', '24h'] as const) }) });
  /** The overview's charts: runs started, completed, failed and parked per bucket over the last hour or day. */
  @Get('activity')
  activity(@Input(DashboardMetaController.activity) { query }: EndpointInput<typeof DashboardMetaController.activity>) {
    return this.service.activity(query.range);
  }

  /** Server-sent events: `runs` with the ids of runs that changed (any instance), `ping` to keep the stream open. */
  @Sse('events')
  events(@Input(DashboardMetaController.nothing) _: unknown): Observable<MessageEvent> {
    return this.feed.events();
  }
}

/** The API's controllers and where each is mounted under `${path}/api`. */
export const API_CONTROLLERS: ReadonlyArray<readonly [Type, string]> = [
  [DashboardRunsController, 'runs'],
  [DashboardBulkController, 'bulk'],
  [DashboardSchedulesController, 'schedules'],
  [DashboardMetaController, ''],
];

/**
 * Whatever the controllers above do not serve under `${path}/api`: 405 with `Allow` where the path
 * exists for other methods, else 404; both in the API's error shape, not the framework's page.
 * Mounted after them, and ahead of the UI's catch-all.
 */
@Controller()
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardErrorsFilter)
export class DashboardApiFallbackController {
  /** The rest of the path comes as `path` (Express) or `*` (Fastify); see dashboard-mount.ts. */
  @All('{*path}')
  fallback(@Param() params: Record<string, string | string[] | undefined>, @Req() request: DashboardRequest): never {
    const path = params.path ?? params['*'];
    const segments = (Array.isArray(path) ? path : (path ?? '').split('/')).filter(Boolean);
    const shown = `/${segments.join('/')}`;
    const allowed = apiRoutes()
      .filter(
        (route) => route.segments.length === segments.length && route.segments.every((s, i) => s.startsWith(':') || s === segments[i]),
      )
      .map((route) => route.method);
    if (!allowed.length)
      throw new NotFoundException({
        code: 'NOT_FOUND',
        message: `No API route ${request.method} ${shown}; the routes are listed in docs/rest-api.md.`,
      });
    throw new MethodNotAllowed(allowed, `${shown} answers ${allowed.join(', ')}, not ${request.method}.`);
  }
}

/** Every (method, path) the API serves, relative to `${path}/api`, read from the controllers' own route metadata. */
function apiRoutes(): Array<{ method: string; segments: string[] }> {
  return API_CONTROLLERS.flatMap(([controller, mount]) =>
    Object.getOwnPropertyNames(controller.prototype)
      .map((name) => controller.prototype[name])
      .filter((handler) => typeof handler === 'function' && Reflect.hasMetadata(METHOD_METADATA, handler))
      .map((handler) => ({
        method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod],
        segments: [mount, ...String(Reflect.getMetadata(PATH_METADATA, handler)).split('/')].filter(Boolean),
      })),
  );
}
