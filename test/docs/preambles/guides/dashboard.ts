// What docs/guides/dashboard.md's blocks use without declaring it (see scripts/doc-snippets.mjs).
import type { CanActivate } from '@nestjs/common';

export { Injectable } from '@nestjs/common';
export type { CanActivate, ExecutionContext } from '@nestjs/common';
export { DurableModule } from 'nestjs-durable';

export declare class AdminGuard implements CanActivate {
  canActivate(): Promise<boolean>;
}
export declare class SessionService {
  userFrom(request: unknown): Promise<{ email: string; isAdmin: boolean } | undefined>;
}
