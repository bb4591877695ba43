import { InitialSchema1732900000000 } from './1732900000000-initial-schema';

/** Every migration of the library, oldest first. */
export const DURABLE_MIGRATIONS = [InitialSchema1732900000000];
