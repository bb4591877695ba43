import { Controller, Get, NotFoundException, Param, Req, Res, SetMetadata, StreamableFile, UseFilters, UseGuards } from '@nestjs/common';
import { AbstractHttpAdapter, HttpAdapterHost } from '@nestjs/core';
import { createReadStream, existsSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { DashboardAuthGuard, PUBLIC_ROUTE } from './dashboard-auth.guard';
import { DashboardErrorsFilter } from './dashboard-errors.filter';

/** No inline script may run: a payload that smuggled markup into the page could not execute. */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/** Where the built UI lives: beside the compiled library when published, in the workspace's dist when developing. */
export function dashboardUiRoot(): string | undefined {
  const candidates = [
    join(__dirname, '..', 'dashboard-ui'),
    join(__dirname, '..', '..', 'dashboard-ui'),
    resolve(__dirname, '..', '..', '..', '..', 'dist', 'dashboard-ui'),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

/** Serves the UI's files under the dashboard path, with the CSP on every response; on Express and Fastify alike. */
@Controller()
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardErrorsFilter)
export class DashboardUiController {
  private readonly root = dashboardUiRoot();

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  private get http(): AbstractHttpAdapter {
    return this.adapterHost.httpAdapter;
  }

  @Get()
  @SetMetadata(PUBLIC_ROUTE, true)
  index(@Req() request: unknown, @Res() response: unknown): void {
    const url: string = this.http.getRequestUrl(request);
    const [path, query] = url.split(/\?(.*)/s);
    // The UI's asset URLs are relative: the page must be served at the path with its trailing slash.
    if (!path.endsWith('/')) return this.http.redirect(response, 301, `${path}/${query ? `?${query}` : ''}`);
    this.send('index.html', response);
  }

  /** The rest of the path comes as `path` (Express) or `*` (Fastify); see dashboard-mount.ts. */
  @Get('*path')
  @SetMetadata(PUBLIC_ROUTE, true)
  file(@Param() params: Record<string, string | string[] | undefined>, @Res() response: unknown): void {
    const file = params.path ?? params['*'] ?? '';
    // Fastify routes the path with its trailing slash here, with nothing after it: the page itself.
    this.send((Array.isArray(file) ? file.join('/') : file) || 'index.html', response);
  }

  private send(file: string, response: unknown): void {
    if (!this.root)
      throw new NotFoundException({
        code: 'UI_NOT_BUILT',
        message: 'The dashboard UI is not built: run `npm run build` (the REST API works without it).',
      });
    const path = resolve(this.root, file);
    if (!path.startsWith(this.root + sep) || !existsSync(path) || !TYPES[extname(path)])
      throw new NotFoundException({ code: 'NOT_FOUND', message: 'No such file.' });
    this.http.setHeader(response, 'Content-Security-Policy', CONTENT_SECURITY_POLICY);
    this.http.setHeader(response, 'X-Content-Type-Options', 'nosniff');
    this.http.setHeader(response, 'Cache-Control', file === 'index.html' ? 'no-cache' : 'public, max-age=31536000, immutable');
    this.http.setHeader(response, 'Content-Type', TYPES[extname(path)]);
    this.http.reply(response, new StreamableFile(createReadStream(path)), 200);
  }
}
