import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { InvalidArgumentError } from '../errors';
import { ScheduleRepository } from '../persistence/schedule.repository';
import { DbClock } from '../runtime/db-clock';
import { WorkflowRegistry } from '../runtime/workflow.registry';
import { ResolvedSchedule, resolveScheduleSpec } from '../schema/schedule-spec';

/**
 * At boot, checks every schedule declared on a @Workflow (cron, timezone, durations, unique names:
 * a mistake fails the boot naming the schedule, before anything is written) and reconciles them with
 * the schedules table.
 */
@Injectable()
export class ScheduleReconciler implements OnApplicationBootstrap {
  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly schedules: ScheduleRepository,
    private readonly clock: DbClock,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const specs = new Map<string, ResolvedSchedule>();
    for (const workflow of this.registry.all()) {
      for (const spec of workflow.options.schedules ?? []) {
        const resolved = resolveScheduleSpec(spec, workflow.name);
        const twin = specs.get(resolved.name);
        if (twin) {
          throw new InvalidArgumentError(
            `Two schedules are named "${resolved.name}" (workflows "${twin.workflow}" and "${workflow.name}"); a schedule name is unique across the app.`,
          );
        }
        specs.set(resolved.name, resolved);
      }
    }
    await this.schedules.reconcile([...specs.values()], this.registry.names(), this.clock.shiftMs);
  }
}
