import { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { API_CONTROLLERS, DashboardApiFallbackController } from './dashboard-api.controllers';
import { DashboardUiController } from './dashboard-ui.controller';

/** Where a disabled dashboard's routes go when options came too late to leave them out (forRootAsync). */
const DISABLED = '/__nestjs-durable-dashboard-disabled__';

/**
 * The dashboard's controllers for one DurableModule, as fresh subclasses, so their paths can be set
 * from the options (at forRoot, or in forRootAsync's factory: either way before Nest registers routes)
 * without touching another application's controllers in the same process. Listed in route order: the
 * API's routes, then its fallback (404 and 405 in the API's shape), then the UI's catch-all.
 */
export function dashboardControllers(): { controllers: Type[]; mount(path: string | false): void } {
  const api = API_CONTROLLERS.map(([controller, under]) => [class extends controller {}, under] as const);
  const fallback = class extends DashboardApiFallbackController {};
  const ui = class extends DashboardUiController {};
  return {
    controllers: [...api.map(([controller]) => controller), fallback, ui],
    mount(path) {
      const base = path === false ? DISABLED : path;
      for (const [controller, under] of api)
        Reflect.defineMetadata(PATH_METADATA, under ? `${base}/api/${under}` : `${base}/api`, controller);
      Reflect.defineMetadata(PATH_METADATA, `${base}/api`, fallback);
      Reflect.defineMetadata(PATH_METADATA, base, ui);
    },
  };
}
