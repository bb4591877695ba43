import { Inject, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { DashboardOptions } from '../interfaces';
import { INVALID_ENCODING } from './api-input';

/** The API's own body limit, whatever the application's parser allows. */
const LIMIT_BYTES = 1024 * 1024;

const TOO_LARGE = { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than 1 MiB.' };
const INVALID_JSON = { code: 'INVALID_JSON', message: 'The request body is not valid JSON.' };
const NOT_JSON = { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The request body must be JSON (Content-Type: application/json).' };

type Next = (error?: { status?: number }) => void;
type ExpressHandler = (request: IncomingMessage & { originalUrl?: string }, response: ServerResponse, next: Next) => void;
interface ExpressLike {
  use(handler: ExpressHandler): void;
  router?: { stack: unknown[] };
  _router?: { stack: unknown[] };
}
interface FastifyRequestLike {
  url: string;
  raw: IncomingMessage;
}
interface FastifyReplyLike {
  statusCode: number;
  code(status: number): FastifyReplyLike;
  header(name: string, value: string): FastifyReplyLike;
  send(body: unknown): FastifyReplyLike;
}
/** The path parameter length the dashboard needs of Fastify: the longest run id read (10,000 characters), as sent. */
export const RUN_ID_PARAM_LENGTH = 10_000;

interface FastifyLike {
  initialConfig?: { maxParamLength?: number; routerOptions?: { maxParamLength?: number } };
  addHook(name: 'onRoute', hook: (route: { url: string; bodyLimit?: number }) => void): void;
  addHook(name: 'onRequest', hook: (request: FastifyRequestLike, reply: FastifyReplyLike, done: () => void) => void): void;
  addHook(
    name: 'onSend',
    hook: (request: FastifyRequestLike, reply: FastifyReplyLike, payload: unknown, done: (error: null, payload: unknown) => void) => void,
  ): void;
}

/**
 * What the API's requests pass before any route, on Express and Fastify alike: a URL that is not valid
 * percent-encoding gets 400 (the router would fail decoding it with the framework's own error page),
 * bodies are parsed with the API's own 1 MiB limit (the application's, 100 kB on Express by default,
 * must not decide what operators may send), over it 413, malformed JSON 400, a body that is not JSON
 * 415 (Express dropped it: an optional body's action, a trigger's or a cancel's, went on without it);
 * all in the API's error shape. Installed by DurableModule.configure, which Nest calls before it registers any route.
 */
@Injectable()
export class DashboardApiGate {
  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  beforeRoutes(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter || !this.options.dashboard) return;
    const prefix = `${(this.options.dashboard as DashboardOptions).path}/api`.toLowerCase();
    // Matched anywhere in the path, so an application's global prefix (/v1/durable/api) is covered too, and
    // whatever its case, as Express routes it (a /DURABLE/api request in plain text skipped the 415 and was served).
    const ours = (url: string) => {
      const path = url.split('?')[0].toLowerCase();
      return path.endsWith(prefix) || path.includes(`${prefix}/`);
    };
    if (adapter.getType() === 'fastify') this.onFastify(adapter.getInstance<FastifyLike>(), ours);
    else if (adapter.getType() === 'express') this.onExpress(adapter.getInstance<ExpressLike>(), ours);
  }

  private onExpress(app: ExpressLike, ours: (url: string) => boolean): void {
    const { json } = require('express') as { json(options: object): ExpressHandler };
    const parse = json({ limit: LIMIT_BYTES, strict: false });
    const answer = (response: ServerResponse, status: number, body: object) => {
      response.statusCode = status;
      response.setHeader('Content-Type', 'application/json; charset=utf-8');
      response.end(JSON.stringify(body));
    };
    app.use((request, response, next) => {
      const url = request.originalUrl ?? request.url ?? '';
      if (!ours(url)) return next();
      if (!decodable(url)) return answer(response, 400, INVALID_ENCODING);
      if (notJson(request.headers)) return answer(response, 415, NOT_JSON);
      parse(request, response, (error) => {
        if (!error) return next();
        answer(response, error.status === 413 ? 413 : 400, error.status === 413 ? TOO_LARGE : INVALID_JSON);
      });
    });
    // Move it from the end of the stack to the front, ahead of the global parsers.
    const stack = (app.router ?? app._router)?.stack;
    if (stack) stack.unshift(stack.pop());
  }

  private onFastify(app: FastifyLike, ours: (url: string) => boolean): void {
    // Fastify's router does not match a path parameter longer than maxParamLength (100 by default), and a run id
    // often is (a schedule's slot run, a child's id under its parent's): its page and actions answered 404 or 405.
    // Under routerOptions (Fastify 5.5 on; Nest fills it with the default) or at the top (before, and still honoured).
    const paramLength = Math.max(app.initialConfig?.routerOptions?.maxParamLength ?? 0, app.initialConfig?.maxParamLength ?? 0);
    if (paramLength < RUN_ID_PARAM_LENGTH)
      new Logger('DurableDashboard').warn(
        `Fastify's maxParamLength is ${paramLength}: the dashboard cannot reach a run whose id is longer (a schedule's slot run, a child's id). ` +
          `Create the adapter with new FastifyAdapter({ routerOptions: { maxParamLength: ${RUN_ID_PARAM_LENGTH} } }).`,
      );
    app.addHook('onRoute', (route) => {
      if (ours(route.url)) route.bodyLimit = LIMIT_BYTES;
    });
    app.addHook('onRequest', (request, reply, done) => {
      if (!ours(request.url)) return done();
      if (!decodable(request.url)) return void reply.code(400).send(INVALID_ENCODING);
      // A mutation without a body but with its JSON content type (resume, cancel): Express reads it as no
      // body; Fastify's parser would refuse an empty JSON body.
      const headers = request.raw.headers;
      if (!hasBody(headers)) delete headers['content-type'];
      // Fastify parses text/plain as a string, which the endpoint's schema refuses as another 400.
      else if (notJson(headers)) return void reply.code(415).send(NOT_JSON);
      done();
    });
    // Fastify's own refusals (body too large, malformed or empty JSON, wrong media type) in the API's shape.
    // (A URL its router cannot decode is refused before any hook runs: 400 in Fastify's own shape.)
    app.addHook('onSend', (request, reply, payload, done) => {
      if (reply.statusCode < 400 || typeof payload !== 'string' || !ours(request.url)) return done(null, payload);
      let body: { statusCode?: unknown; code?: unknown; message?: unknown } | undefined;
      try {
        body = JSON.parse(payload);
      } catch {
        return done(null, payload);
      }
      if (typeof body?.statusCode !== 'number') return done(null, payload);
      done(null, JSON.stringify(fastifyRefusal(reply.statusCode, body)));
    });
  }
}

/** A refusal Fastify answered in its shape, `{ statusCode, code?, message }`, in the API's. */
function fastifyRefusal(status: number, body: { code?: unknown; message?: unknown }): { code: string; message: string } {
  if (status === 413) return TOO_LARGE;
  if (status === 415) return NOT_JSON;
  if (status === 400 && (String(body.code).startsWith('FST_ERR_CTP') || /JSON/i.test(String(body.message)))) return INVALID_JSON;
  return { code: status === 400 ? 'BAD_REQUEST' : 'ERROR', message: String(body.message ?? 'The request was refused.') };
}

function hasBody(headers: IncomingHttpHeaders): boolean {
  return (headers['content-length'] ?? '0') !== '0' || headers['transfer-encoding'] !== undefined;
}

/** A body sent with another media type than application/json (or none). */
function notJson(headers: IncomingHttpHeaders): boolean {
  return hasBody(headers) && (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase() !== 'application/json';
}

function decodable(url: string): boolean {
  try {
    decodeURIComponent(url);
    return true;
  } catch {
    return false;
  }
}
