import { resolve } from 'node:path';
import type { Duration } from 'nestjs-durable';
import { loadDashboardToken } from './admin/dashboard-token';

const dashboardAuth = (process.env.DASHBOARD_AUTH ?? 'token') as 'token' | 'guard';

/** The example's settings, from the environment, with defaults that make a first start work. */
export const config = {
  port: Number(process.env.PORT ?? 3000),
  databaseUrl: required('DATABASE_URL'),
  /** 'token' (the demo default) or 'guard' (behind the app's own admin login). */
  dashboardAuth,
  /**
   * In 'token' mode, the dashboard's bearer token: DASHBOARD_TOKEN, else generated at the first start and
   * kept for the next ones in DASHBOARD_TOKEN_FILE (default `.data/dashboard-token` under the working
   * folder, the checkout's root for `npm start`; git-ignored, beside the embedded database's data).
   */
  dashboardToken:
    dashboardAuth === 'token' ? loadDashboardToken(resolve(process.env.DASHBOARD_TOKEN_FILE || '.data/dashboard-token')) : undefined,
  adminKey: process.env.ADMIN_KEY ?? 'admin-demo-key',
  /** Waits are short by default so a demo order finishes in minutes; production values are days. */
  /** A manager who has not decided by then is reminded (the order escalates); the approval gives up at approvalTimeout. */
  approvalEscalation: (process.env.APPROVAL_ESCALATION ?? '2m') as Duration,
  approvalTimeout: (process.env.APPROVAL_TIMEOUT ?? '10m') as Duration,
  /** The whole order must close by then (a run deadline): a late order is refunded. */
  orderTimeout: (process.env.ORDER_TIMEOUT ?? '1h') as Duration,
  deliveryWindow: (process.env.DELIVERY_WINDOW ?? '30s') as Duration,
  /** The stand-in carrier refuses a parcel worth more (cents): the order is refunded. */
  carrierInsuranceLimitCents: cents('CARRIER_INSURANCE_LIMIT_CENTS', 2_000_000),
  feedbackTimeout: (process.env.FEEDBACK_TIMEOUT ?? '2m') as Duration,
};

function required(name: string): string {
  const value = process.env[name];
  if (!value)
    throw new Error(`${name} is not set. Start the example with \`npm start\` (it provides an embedded PostgreSQL), or set ${name}.`);
  return value;
}

/** A whole number of cents from the environment, or `fallback` when unset; anything else stops the start, naming it. */
function cents(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  if (!/^\d{1,15}$/.test(value)) throw new Error(`${name} must be a whole number of cents; got "${value}".`);
  return Number(value);
}
