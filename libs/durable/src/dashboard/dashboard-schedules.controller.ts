import { Controller, Get, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import { z } from 'zod';
import { ScheduleService } from '../client/schedule.service';
import { WorkflowClient } from '../client/workflow.client';
import { SCHEDULE_OVERLAPS } from '../schema/schedule-spec';
import { endpoint, EndpointInput, Input, instant, oneOf, text } from './api-input';
import { DashboardAuthGuard, DashboardRequest } from './dashboard-auth.guard';
import { DashboardErrorsFilter } from './dashboard-errors.filter';
import { Action, actor, noBody } from './dashboard-routes';
import { DashboardService } from './dashboard.service';
import { toDisplay } from './display';

const scheduleName = { name: text(120) };

/**
 * Schedules: list, inspect, pause, resume, trigger, backfill (with a preview). Mounted at `${path}/api/schedules`.
 * A view holds the schedule's deserialized input and its runs theirs: plain JSON as the runs' endpoints give it
 * (toDisplay; a BigInt made the answer fail, after the pause or resume it answers had landed).
 */
@Controller()
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardErrorsFilter)
export class DashboardSchedulesController {
  constructor(
    private readonly schedules: ScheduleService,
    private readonly client: WorkflowClient,
    private readonly service: DashboardService,
  ) {}

  private async view(name: string) {
    return toDisplay(await this.schedules.get(name));
  }

  static readonly list = endpoint({});
  @Get()
  async list(@Input(DashboardSchedulesController.list) _: unknown) {
    return { schedules: (await this.schedules.list()).map(toDisplay) };
  }

  static readonly detail = endpoint({ params: z.strictObject(scheduleName) });
  @Get(':name')
  async detail(@Input(DashboardSchedulesController.detail) { params }: EndpointInput<typeof DashboardSchedulesController.detail>) {
    const schedule = await this.view(params.name);
    const [{ runs }, skipped] = await Promise.all([
      this.client.listRuns({ schedule: params.name, limit: 20 }),
      this.schedules.skipped(params.name, 50),
    ]);
    return { schedule, runs: runs.map((run) => this.service.runJson(run)), skipped };
  }

  static readonly pause = endpoint({ params: z.strictObject(scheduleName), body: noBody });
  @Post(':name/pause')
  @Action()
  async pause(
    @Input(DashboardSchedulesController.pause) { params }: EndpointInput<typeof DashboardSchedulesController.pause>,
    @Req() request: DashboardRequest,
  ) {
    await this.schedules.pause(params.name, { actor: actor(request) });
    return this.view(params.name);
  }

  static readonly resume = endpoint({ params: z.strictObject(scheduleName), body: noBody });
  @Post(':name/resume')
  @Action()
  async resume(
    @Input(DashboardSchedulesController.resume) { params }: EndpointInput<typeof DashboardSchedulesController.resume>,
    @Req() request: DashboardRequest,
  ) {
    await this.schedules.resume(params.name, { actor: actor(request) });
    return this.view(params.name);
  }

  static readonly trigger = endpoint({
    params: z.strictObject(scheduleName),
    body: z.strictObject({ overlap: oneOf(SCHEDULE_OVERLAPS).optional(), expectLastRun: text(10_000).optional() }).optional(),
  });
  /**
   * Under the schedule's overlap policy, or `overlap`: a refusal is 409 SCHEDULE_OVERLAP, naming the
   * unfinished run; so is an unfinished last run other than `expectLastRun`.
   */
  @Post(':name/trigger')
  @Action()
  async trigger(
    @Input(DashboardSchedulesController.trigger) { params, body }: EndpointInput<typeof DashboardSchedulesController.trigger>,
    @Req() request: DashboardRequest,
  ) {
    const handle = await this.schedules.trigger(params.name, {
      actor: actor(request),
      overlap: body?.overlap,
      expectLastRun: body?.expectLastRun,
    });
    return { runId: handle.runId };
  }

  static readonly backfill = endpoint({
    params: z.strictObject(scheduleName),
    body: z.strictObject({ from: instant(), to: instant(), dryRun: z.boolean().optional() }),
  });
  /** With `dryRun: true`, answers how many runs the range would start and changes nothing. */
  @Post(':name/backfill')
  @Action()
  async backfill(
    @Input(DashboardSchedulesController.backfill) { params, body }: EndpointInput<typeof DashboardSchedulesController.backfill>,
    @Req() request: DashboardRequest,
  ) {
    if (body.dryRun) return { dryRun: true, ...(await this.schedules.backfillPreview(params.name, body.from, body.to)) };
    return { dryRun: false, ...(await this.schedules.backfill(params.name, body.from, body.to, { actor: actor(request) })) };
  }
}
