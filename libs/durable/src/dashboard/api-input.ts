import { BadRequestException, createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { z } from 'zod';
import { InvalidArgumentError } from '../errors';
import { checkKeys } from '../schema/business-keys';
import { isStorableText } from '../schema/define-signal';
import { toMs } from '../schema/duration';
import type { Duration } from '../interfaces';

/**
 * What one endpoint accepts, declared beside its route: its path parameters, query parameters and
 * body, each a zod schema. An undeclared query takes no parameter; an undeclared body is not read.
 */
export interface Endpoint {
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
}

/** What a handler receives: each declared part, parsed. */
export type EndpointInput<E extends Endpoint> = { [K in keyof Endpoint]-?: E[K] extends z.ZodType ? z.output<E[K]> : undefined };

/** Declares an endpoint's input (an identity, so the declaration keeps its exact type). */
export const endpoint = <E extends Endpoint>(declaration: E): E => declaration;

/** The one answer to a URL that is not valid percent-encoding, in the path or in the query. */
export const INVALID_ENCODING = {
  code: 'INVALID_ENCODING',
  message: 'The URL is not valid percent-encoding: each "%" must start a UTF-8 byte written as two hex digits.',
};

/**
 * The request's input validated against the endpoint's declaration: the handler's one parameter.
 * Any mismatch is an InvalidArgumentError (400) whose message names each parameter at fault.
 */
export const Input = createParamDecorator((declaration: Endpoint, context: ExecutionContext) =>
  parseInput(declaration, context.switchToHttp().getRequest<Request>()),
);

const NO_QUERY = z.strictObject({});
const PLACES = { params: 'Path parameter', query: 'Query parameter', body: 'Body field' } as const;

function parseInput(declaration: Endpoint, request: Request): EndpointInput<Endpoint> {
  const given = { params: { ...request.params }, query: queryOf(request.originalUrl ?? request.url), body: request.body ?? undefined };
  const schemas = { params: declaration.params, query: declaration.query ?? NO_QUERY, body: declaration.body };
  const input: Record<string, unknown> = {};
  const problems: Array<{ in: keyof typeof PLACES; name: string; message: string }> = [];
  for (const place of ['params', 'query', 'body'] as const) {
    const schema = schemas[place];
    if (!schema) continue;
    const result = schema.safeParse(given[place]);
    if (result.success) input[place] = result.data;
    else for (const issue of result.error.issues) problems.push(...describe(place, issue, given[place]));
  }
  if (problems.length) {
    const message = problems
      .map((p) => {
        const text = p.message.replace(/\.$/, ''); // a library error's sentence ends with its own
        return p.name ? `${PLACES[p.in]} "${p.name}": ${text}.` : `The request body: ${text}.`;
      })
      .join(' ');
    throw new InvalidArgumentError(message, { issues: problems });
  }
  return input as EndpointInput<Endpoint>;
}

/**
 * The query as given, read from the URL rather than from the application's query parser (which may
 * turn `q[a]=1` into an object, or drop it): a name given once is a string, a repeated name a list,
 * and an empty value (`?q=`) counts as not given, as an empty form field does.
 */
function queryOf(url: string): Record<string, string | undefined | Array<string | undefined>> {
  const query: Record<string, string | undefined | Array<string | undefined>> = {};
  const start = url.indexOf('?');
  if (start < 0) return query;
  for (const pair of url.slice(start + 1).split('&')) {
    if (!pair) continue;
    const at = pair.indexOf('=');
    const name = decode(at < 0 ? pair : pair.slice(0, at));
    const value = (at < 0 ? '' : decode(pair.slice(at + 1))) || undefined;
    const all = Object.hasOwn(query, name) ? [query[name]].flat().concat(value) : value;
    // A defined property, so a parameter named "__proto__" is data like any other.
    Object.defineProperty(query, name, { value: all, enumerable: true, writable: true, configurable: true });
  }
  return query;
}

function decode(component: string): string {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    throw new BadRequestException(INVALID_ENCODING);
  }
}

/** One zod issue as messages naming the parameter; a repeated query scalar and unknown names get their own words. */
function describe(
  place: keyof typeof PLACES,
  issue: z.core.$ZodIssue,
  given: unknown,
): Array<{ in: keyof typeof PLACES; name: string; message: string }> {
  // A query parameter is named as given (`status`, not `status.1` for the second of its values).
  const at = (place === 'query' ? issue.path.slice(0, 1) : issue.path).map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      in: place,
      name: at ? `${at}.${key}` : key,
      message:
        place === 'body'
          ? 'is not a field this endpoint takes'
          : key.includes('[')
            ? 'is not a parameter of this endpoint (brackets are not parsed: repeat the parameter to give a list)'
            : 'is not a parameter of this endpoint',
    }));
  }
  const value = issue.path.reduce<unknown>(
    (object, key) => (object as Record<PropertyKey, unknown> | undefined)?.[key as PropertyKey],
    given,
  );
  if (place === 'query' && issue.code === 'invalid_type' && Array.isArray(value))
    return [{ in: place, name: at, message: 'is given more than once; give it once' }];
  if (place === 'body' && !at && issue.code === 'invalid_type') return [{ in: place, name: at, message: 'must be a JSON object' }];
  return [{ in: place, name: at, message: issue.message }];
}

/** Text that can be a key in Postgres: a string, non-empty, at most `max` characters, without NUL or a lone surrogate. */
export function text(max = Number.MAX_SAFE_INTEGER) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine(isStorableText, 'cannot hold a NUL character or a lone surrogate');
}

/** A page size in a query string: a whole number from 1 to `max`, given to the handler as a number. */
export function pageLimit(max: number) {
  return z
    .string()
    .refine((s) => /^\d{1,9}$/.test(s) && +s >= 1 && +s <= max, `must be a whole number from 1 to ${max}`)
    .transform(Number);
}

/** A field that must be present, with any JSON value (null included). */
export const present = z.custom<unknown>((value) => value !== undefined, 'is required (null is allowed)');

/** One of `values`, saying which when it is not. */
export function oneOf<T extends string>(values: readonly T[]) {
  return z.enum(values as [T, ...T[]], {
    error: (issue) => `must be one of ${values.join(', ')}; got ${String(JSON.stringify(issue.input)).slice(0, 100)}`,
  });
}

/** An instant as ISO-8601 text with its offset (`2026-03-29T09:00:00Z`), given to the handler as a Date. */
export function instant() {
  return z
    .string({ error: 'must be a string' })
    .refine(
      (value) => z.iso.datetime({ offset: true }).safeParse(value).success && !Number.isNaN(Date.parse(value)),
      'must be an ISO-8601 date and time with its offset, such as 2026-03-29T09:00:00Z',
    )
    .transform((value) => new Date(value));
}

/** A Duration: milliseconds, or text such as `'30s'`, `'5m'`, `'2h'`, `'7d'`, checked as the library checks it. */
export function duration() {
  return z.union([z.number(), z.string()], { error: 'must be milliseconds (a number) or text such as "30s"' }).refine((value) => {
    try {
      toMs(value as Duration);
      return true;
    } catch {
      return false;
    }
  }, 'must be a duration from 0 to 100 years: milliseconds, or text such as "30s", "5m", "2h", "7d"');
}

/**
 * Business keys, name to value, checked whole as the library checks them (checkKeys): a z.record drops
 * a `__proto__` name, and with it a start's key or a bulk filter's condition, where it must be refused.
 */
export function businessKeys() {
  return z.unknown().transform((value, ctx) => {
    try {
      return checkKeys(value, 'Business keys');
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
      return z.NEVER;
    }
  });
}
