import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { timingSafeEqual, createHash } from 'node:crypto';
import { config } from '../config';

/**
 * The application's own admin login (a stand-in for your real one: sessions, OAuth…): a cookie set by
 * /admin/login. With DASHBOARD_AUTH=guard the dashboard sits behind it, and the history records the
 * admin as the actor of every operator action.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest();
    const key = cookie(request.headers.cookie, 'admin_key') ?? request.headers['x-admin-key'];
    if (typeof key !== 'string' || !same(key, config.adminKey)) return false;
    request.user = { id: 'admin' };
    return true;
  }
}

function cookie(header: string | undefined, name: string): string | undefined {
  const match = header
    ?.split(';')
    .map((part) => part.trim().split('='))
    .find(([key]) => key === name);
  return match ? decodeURIComponent(match.slice(1).join('=')) : undefined;
}

function same(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
