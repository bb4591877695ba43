// What docs/guides/operations.md's blocks use without declaring it (see scripts/doc-snippets.mjs):
// the imports and the arguments of test/operations/ops-endpoints.ts, which the first block is.
export { Controller, Get, Header, Module } from '@nestjs/common';
export { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
export { Registry } from 'prom-client';
export { DurableModule } from 'nestjs-durable';
export { DurableHealthIndicator } from 'nestjs-durable/health';

export declare const connection: string;
export declare const schema: string;
/** The read-replica block: the application's own guard, and its two URLs. */
export declare class AdminGuard {
  canActivate(): boolean;
}
export declare const primaryUrl: string;
export declare const replicaUrl: string;
