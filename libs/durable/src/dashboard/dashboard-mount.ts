import { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { DashboardBulkController, DashboardMetaController, DashboardRunsController } from './dashboard-api.controllers';
import { DashboardUiController } from './dashboard-ui.controller';

/** Where a disabled dashboard's routes go when options came too late to leave them out (forRootAsync). */
const DISABLED = '/__nestjs-durable-dashboard-disabled__';

/**
 * The dashboard's controllers for one DurableModule, as fresh subclasses, so their paths can be set
 * from the options (at forRoot, or in forRootAsync's factory: either way before Nest registers routes)
 * without touching another application's controllers in the same process.
 */
export function dashboardControllers(): { controllers: Type[]; mount(path: string | false): void } {
  const runs = class extends DashboardRunsController {};
  const bulk = class extends DashboardBulkController {};
  const meta = class extends DashboardMetaController {};
  const ui = class extends DashboardUiController {};
  return {
    controllers: [runs, bulk, meta, ui],
    mount(path) {
      const base = path === false ? DISABLED : path;
      Reflect.defineMetadata(PATH_METADATA, `${base}/api/runs`, runs);
      Reflect.defineMetadata(PATH_METADATA, `${base}/api/bulk`, bulk);
      Reflect.defineMetadata(PATH_METADATA, `${base}/api`, meta);
      Reflect.defineMetadata(PATH_METADATA, base, ui);
    },
  };
}
