import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  Logger,
  NotFoundException,
  OnModuleInit,
  Type,
  UnauthorizedException,
} from '@nestjs/common';
import { ModuleRef, Reflector } from '@nestjs/core';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { DashboardOptions } from '../interfaces';

/** A route anyone may call (the UI's files). */
export const PUBLIC_ROUTE = 'nestjs-durable:dashboard-public';
/** A route that answers either way and is told whether the request is signed in (the session). */
export const SESSION_ROUTE = 'nestjs-durable:dashboard-session';
export const MUTATION = 'nestjs-durable:dashboard-mutation';

/** The request as the dashboard's handlers see it, with who is acting. */
export interface DashboardRequest extends Request {
  durableActor?: string;
  durableAuthenticated?: boolean;
  user?: { id?: unknown; name?: unknown; username?: unknown; email?: unknown };
}

/**
 * Every dashboard route passes here. Auth is never implicit: the application's own guard, a bearer
 * token compared in constant time, or an explicit insecureNoAuth, after a 403 for a request a browser
 * sent from another site's page (Sec-Fetch-Site). Then, for mutations: 403 in read-only mode, and 403
 * without `x-durable-request: 1` (a cross-site form cannot set that header).
 */
@Injectable()
export class DashboardAuthGuard implements CanActivate, OnModuleInit {
  private appGuard?: CanActivate;

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly moduleRef: ModuleRef,
    private readonly reflector: Reflector,
  ) {}

  private get dashboard(): DashboardOptions {
    return this.options.dashboard as DashboardOptions;
  }

  onModuleInit(): void {
    if (this.options.dashboard && 'insecureNoAuth' in this.options.dashboard.auth) {
      new Logger('DurableDashboard').warn(
        `The dashboard at ${this.options.dashboard.path} has NO authentication (insecureNoAuth): anyone who reaches it can signal, cancel and retry runs. Use { guard } or { token } outside local development.`,
      );
    }
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    // Routes of a dashboard that forRootAsync's options turned off exist, but answer nothing.
    if (!this.options.dashboard) throw new NotFoundException({ code: 'NOT_FOUND', message: 'The dashboard is not enabled.' });
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    if (this.reflector.get<boolean>(PUBLIC_ROUTE, context.getHandler())) return true;
    // The UI calls its API from its own origin. A browser says where a request came from: a page of another site, or
    // of another host of the same site, could otherwise read and change runs with the user's cookies wherever the
    // application's CORS lets it (origin: true, credentials: true). Scripts and typed addresses send no such header, or 'none'.
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      throw new ForbiddenException({
        code: 'CROSS_SITE',
        message: `Requests from another site's pages are refused (Sec-Fetch-Site: ${site}).`,
      });
    if (this.reflector.get<boolean>(SESSION_ROUTE, context.getHandler())) {
      request.durableAuthenticated = await this.authenticate(context, request).catch(() => false);
      return true;
    }
    if (!(await this.authenticate(context, request))) throw new UnauthorizedException({ code: 'UNAUTHORIZED', message: this.challenge() });
    if (this.reflector.get<boolean>(MUTATION, context.getHandler())) {
      if (this.dashboard.readOnly)
        throw new ForbiddenException({
          code: 'READ_ONLY',
          message: 'The dashboard is read-only: it lists and inspects runs, and changes nothing.',
        });
      if (request.headers['x-durable-request'] !== '1') {
        throw new ForbiddenException({
          code: 'MISSING_HEADER',
          message: 'Mutating requests must carry the header "x-durable-request: 1".',
        });
      }
    }
    return true;
  }

  /** True when the request's credentials pass; sets `durableActor` for the history. */
  private async authenticate(context: ExecutionContext, request: DashboardRequest): Promise<boolean> {
    const allowed = await this.credentialsPass(context, request);
    if (allowed && this.dashboard.actor) {
      const resolved = await this.dashboard.actor(request);
      if (typeof resolved === 'string' && resolved.trim()) request.durableActor = shortName(resolved);
    }
    return allowed;
  }

  private async credentialsPass(context: ExecutionContext, request: DashboardRequest): Promise<boolean> {
    const auth = this.dashboard.auth;
    if ('insecureNoAuth' in auth) {
      request.durableActor = operatorOf(request, 'anonymous');
      return true;
    }
    if ('token' in auth) {
      const header = request.headers.authorization ?? '';
      const given = header.startsWith('Bearer ') ? header.slice(7) : '';
      if (!given || !sameSecret(given, auth.token)) return false;
      // A shared token says nothing of who holds it: the operator names themself at sign-in.
      request.durableActor = operatorOf(request, 'token');
      return true;
    }
    this.appGuard ??= await this.resolveGuard(auth.guard);
    let allowed: boolean;
    try {
      allowed = Boolean(await toPromise(this.appGuard.canActivate(context)));
    } catch (error) {
      if (error instanceof UnauthorizedException || error instanceof ForbiddenException) return false;
      throw error;
    }
    if (allowed) request.durableActor = actorOf(request.user) ?? 'guard';
    return allowed;
  }

  private challenge(): string {
    return 'token' in this.dashboard.auth
      ? 'Send the dashboard token as "Authorization: Bearer <token>".'
      : 'Sign in to the application to use the dashboard.';
  }

  /** The application's guard: its own instance when it is a provider, else one made here with its dependencies injected. */
  private async resolveGuard(guard: Type<CanActivate>): Promise<CanActivate> {
    try {
      return this.moduleRef.get(guard, { strict: false });
    } catch {
      return this.moduleRef.create(guard);
    }
  }
}

function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The name an operator gave at sign-in (header `x-durable-operator`) with how they got in, or just that. */
function operatorOf(request: DashboardRequest, mode: string): string {
  const given = request.headers['x-durable-operator'];
  const name = typeof given === 'string' ? decodeName(given) : '';
  return name ? `${shortName(name)} (${mode})` : mode;
}

/** Header values are Latin-1: the UI sends the name percent-encoded, so any name survives. */
function decodeName(value: string): string {
  try {
    return decodeURIComponent(value)
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .trim();
  } catch {
    return '';
  }
}

function shortName(name: string): string {
  return name.trim().slice(0, 100);
}

function actorOf(user: DashboardRequest['user']): string | undefined {
  if (!user || typeof user !== 'object') return undefined;
  const value = user.id ?? user.username ?? user.name ?? user.email;
  return value === undefined || value === null ? undefined : String(value).slice(0, 200);
}

async function toPromise<T>(value: T | Promise<T> | { subscribe: Function }): Promise<T> {
  if (value && typeof (value as { subscribe?: unknown }).subscribe === 'function') {
    const { lastValueFrom } = await import('rxjs');
    return lastValueFrom(value as never);
  }
  return value as T;
}
