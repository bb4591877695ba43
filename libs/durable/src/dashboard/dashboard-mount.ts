import { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { API_CONTROLLERS, DashboardApiFallbackController } from './dashboard-api.controllers';
import { DashboardUiController } from './dashboard-ui.controller';

/** Where a disabled dashboard's routes go when options came too late to leave them out (forRootAsync). */
const DISABLED = '/__nestjs-durable-dashboard-disabled__';

/**
 * The catch-all routes as each HTTP platform writes them: Express 5 (path-to-regexp 8) names its
 * wildcards, Fastify's router takes a bare trailing `*` (and `''` for the path itself). The handlers
 * read the rest of the path from `path` or `*`, whichever the platform filled.
 */
const WILDCARDS = {
  express: { fallback: '{*path}', file: '*path' },
  fastify: { fallback: ['', '*'], file: '*' },
} as const;

/** The module's DashboardControllers, for DurableModule.configure to hand the platform to. */
export const DASHBOARD_CONTROLLERS = Symbol('nestjs-durable:dashboard-controllers');

/** The HTTP platforms the dashboard runs on, as `HttpAdapter.getType()` names them. */
export type DashboardPlatform = keyof typeof WILDCARDS;

export interface DashboardControllers {
  controllers: Type[];
  /** Sets the controllers' paths under the dashboard's path (false: disabled). */
  mount(path: string | false): void;
  /** Writes the catch-all routes the way the application's platform reads them; before its routes are registered. */
  platform(type: string): void;
}

/**
 * The dashboard's controllers for one DurableModule, as fresh subclasses, so their paths can be set
 * from the options (at forRoot, or in forRootAsync's factory: either way before Nest registers routes)
 * and from the platform, without touching another application's controllers in the same process.
 * Listed in route order: the API's routes, then its fallback (404 and 405 in the API's shape), then
 * the UI's catch-all.
 */
export function dashboardControllers(): DashboardControllers {
  const api = API_CONTROLLERS.map(([controller, under]) => [class extends controller {}, under] as const);
  const fallback = class extends DashboardApiFallbackController {};
  const ui = class extends DashboardUiController {};
  const fallbackRoute = ownHandler(fallback, 'fallback');
  const fileRoute = ownHandler(ui, 'file');
  const wildcards = (platform: DashboardPlatform) => {
    Reflect.defineMetadata(PATH_METADATA, WILDCARDS[platform].fallback, fallbackRoute);
    Reflect.defineMetadata(PATH_METADATA, WILDCARDS[platform].file, fileRoute);
  };
  wildcards('express');
  return {
    controllers: [...api.map(([controller]) => controller), fallback, ui],
    mount(path) {
      const base = path === false ? DISABLED : path;
      for (const [controller, under] of api)
        Reflect.defineMetadata(PATH_METADATA, under ? `${base}/api/${under}` : `${base}/api`, controller);
      Reflect.defineMetadata(PATH_METADATA, `${base}/api`, fallback);
      Reflect.defineMetadata(PATH_METADATA, base, ui);
    },
    platform(type) {
      wildcards(type === 'fastify' ? 'fastify' : 'express');
    },
  };
}

/**
 * Gives a subclass its own copy of an inherited handler (same body, same metadata), so route
 * metadata set on it stays with this subclass. Parameter decorators live on the class and are inherited.
 */
function ownHandler(subclass: Type, name: string): Function {
  const inherited = Object.getPrototypeOf(subclass.prototype)[name] as Function;
  const own = function (this: unknown, ...args: unknown[]) {
    return inherited.apply(this, args);
  };
  for (const key of Reflect.getMetadataKeys(inherited)) Reflect.defineMetadata(key, Reflect.getMetadata(key, inherited), own);
  Object.defineProperty(subclass.prototype, name, { value: own, writable: true, configurable: true });
  return own;
}
