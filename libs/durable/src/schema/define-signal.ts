import { InvalidArgumentError } from '../errors';
import type { ChannelDefinition, PayloadSchema, SchemaOutput, SignalDefinition } from '../interfaces';

/** One typed signal contract shared by the workflow, the sender and the dashboard. */
export function defineSignal<S extends PayloadSchema>(name: string, schema: S): SignalDefinition<SchemaOutput<S>>;
export function defineSignal<T = unknown>(name: string): SignalDefinition<T>;
export function defineSignal(name: string, schema?: PayloadSchema): SignalDefinition<unknown> {
  return Object.freeze({ kind: 'signal' as const, name: checkName(name, 'signal'), schema });
}

/** One typed channel contract shared by the workflow, the sender and the dashboard. */
export function defineChannel<S extends PayloadSchema>(name: string, schema: S): ChannelDefinition<SchemaOutput<S>>;
export function defineChannel<T = unknown>(name: string): ChannelDefinition<T>;
export function defineChannel(name: string, schema?: PayloadSchema): ChannelDefinition<unknown> {
  return Object.freeze({ kind: 'channel' as const, name: checkName(name, 'channel'), schema });
}

/** Names are keys in the journal: non-empty, at most 200 characters, text Postgres can store. */
export function checkName(name: unknown, what: string): string {
  if (typeof name !== 'string' || name.length === 0 || name.length > 200) {
    const shown = typeof name === 'string' ? `a string of ${name.length} characters` : typeof name;
    throw new InvalidArgumentError(`A ${what} name must be a non-empty string of at most 200 characters; got ${shown}.`);
  }
  if (!isStorableText(name)) throw new InvalidArgumentError(`A ${what} name cannot hold a NUL character or a lone surrogate.`);
  return name;
}

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Postgres text holds no NUL, and a lone surrogate has no UTF-8 form: such text cannot be a key. */
export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** Free text (an error message, a reason) made storable: NUL shown as \0, lone surrogates as U+FFFD. */
export function storableText(text: string): string {
  return isStorableText(text)
    ? text
    : text.replace(/\u0000/g, '\\0').replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
