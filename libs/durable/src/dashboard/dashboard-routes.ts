import { applyDecorators, HttpCode, SetMetadata } from '@nestjs/common';
import { z } from 'zod';
import { DashboardRequest, MUTATION } from './dashboard-auth.guard';

/** Marks a route that changes something: read-only mode and the header rule apply. */
export const Mutation = () => SetMetadata(MUTATION, true);
/** An action on what exists (not a creation): 200. */
export const Action = () => applyDecorators(Mutation(), HttpCode(200));

/** Who acts, for history: the guard's actor, or 'dashboard'. */
export const actor = (request: DashboardRequest) => request.durableActor ?? 'dashboard';

/** A body that is absent or empty: endpoints that take nothing still refuse fields they do not know. */
export const noBody = z.strictObject({}).optional();
