import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { Request, Response } from 'express';
import { DURABLE_OPTIONS } from '../durable.constants';
import type { ResolvedDurableOptions } from '../durable-options';
import type { DashboardOptions } from '../interfaces';
import { INVALID_ENCODING } from './api-input';

const LIMIT = '1mb';

type Handler = (request: Request, response: Response, next: (error?: { status?: number }) => void) => void;
interface ExpressLike {
  use(handler: Handler): void;
  router?: { stack: unknown[] };
  _router?: { stack: unknown[] };
}

/**
 * What the API's requests pass before any route: a URL that is not valid percent-encoding gets 400
 * (the router would fail decoding it with the framework's own error page), then the API's own JSON
 * parser with a 1 MiB limit, placed ahead of the application's global parser (whose limit, 100 kB by
 * default, must not decide what operators may send). Bodies over the limit get 413, malformed JSON
 * 400; all in the API's error shape. Express only; elsewhere the app's parser applies.
 */
@Injectable()
export class DashboardApiGate implements OnModuleInit {
  private readonly logger = new Logger('DurableDashboard');

  constructor(
    @Inject(DURABLE_OPTIONS) private readonly options: ResolvedDurableOptions,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const adapter = this.adapterHost?.httpAdapter;
    if (!adapter || !this.options.dashboard) return;
    if (adapter.getType() !== 'express') {
      this.logger.warn(
        `The dashboard API's 1 MiB body limit is installed on Express only; on ${adapter.getType()} the application's body limit applies.`,
      );
      return;
    }
    const app = adapter.getInstance<ExpressLike>();
    const { json } = require('express') as { json(options: object): Handler };
    const parse = json({ limit: LIMIT, strict: false });
    const prefix = `${(this.options.dashboard as DashboardOptions).path}/api`;
    // Matched anywhere in the path, so an application's global prefix (/v1/durable/api) is covered too.
    const ours = (url: string) => {
      const path = url.split('?')[0];
      return path.endsWith(prefix) || path.includes(`${prefix}/`);
    };
    app.use((request, response, next) => {
      const url = request.originalUrl ?? request.url;
      if (!ours(url)) return next();
      if (!decodable(url)) return response.status(400).json(INVALID_ENCODING);
      parse(request, response, (error) => {
        if (!error) return next();
        const tooLarge = error.status === 413;
        response.status(tooLarge ? 413 : 400).json({
          code: tooLarge ? 'PAYLOAD_TOO_LARGE' : 'INVALID_JSON',
          message: tooLarge ? 'The request body is larger than 1 MiB.' : 'The request body is not valid JSON.',
        });
      });
    });
    // Move it from the end of the stack to the front, ahead of the global parsers.
    const stack = (app.router ?? app._router)?.stack;
    if (stack) stack.unshift(stack.pop());
  }
}

function decodable(url: string): boolean {
  try {
    decodeURIComponent(url);
    return true;
  } catch {
    return false;
  }
}
