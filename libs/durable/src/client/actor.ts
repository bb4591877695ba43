import type { ActorOptions } from '../interfaces';
import { storableText } from '../schema/define-signal';

/** Who acted, as history stores it: text Postgres can hold (no NUL), at most 200 characters; 'api' when unsaid. */
export const actorOf = (opts: ActorOptions): string => storableText(String(opts.actor ?? 'api')).slice(0, 200);
