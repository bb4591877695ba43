import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Injectable, Logger } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { DurableError } from '../errors';

const STATUS_BY_CODE: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  INVALID_PAYLOAD: 400,
  UNKNOWN_SIGNAL: 400,
  WORKFLOW_NOT_FOUND: 400,
  RUN_NOT_FOUND: 404,
  SCHEDULE_NOT_FOUND: 404,
  RUN_CLOSED: 409,
  RUN_CONFLICT: 409,
  INVALID_TRANSITION: 409,
  SCHEDULE_OVERLAP: 409,
};

/** One error shape for the dashboard API, `{ code, message, details? }`; never a stack trace. */
@Catch()
@Injectable()
export class DashboardErrorsFilter implements ExceptionFilter {
  private readonly logger = new Logger('DurableDashboard');

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const { status, body } = errorReply(error);
    if (status >= 500) this.logger.error(`Dashboard request failed: ${(error as Error)?.stack ?? String(error)}`);
    const http = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse();
    // A 405 says which methods the path answers (see DashboardApiFallbackController).
    if (error instanceof MethodNotAllowed) http.setHeader(response, 'Allow', error.allow.join(', '));
    http.reply(response, body, status);
  }
}

/** 405 with the methods the path answers, for the `Allow` header. */
export class MethodNotAllowed extends HttpException {
  constructor(
    readonly allow: string[],
    message: string,
  ) {
    super({ code: 'METHOD_NOT_ALLOWED', message }, 405);
  }
}

function httpCode(status: number): string {
  return (
    (
      {
        400: 'BAD_REQUEST',
        401: 'UNAUTHORIZED',
        403: 'FORBIDDEN',
        404: 'NOT_FOUND',
        405: 'METHOD_NOT_ALLOWED',
        409: 'CONFLICT',
        413: 'PAYLOAD_TOO_LARGE',
      } as Record<number, string>
    )[status] ?? 'ERROR'
  );
}

/**
 * The answer an error gives: a library error its code (and status by code), an HTTP exception its own,
 * anything else 500 INTERNAL, its details left to the server log (the caller logs a status of 500 or more).
 */
export function errorReply(error: unknown): { status: number; body: { code: string; message: string; details?: unknown } } {
  if (error instanceof DurableError) {
    return {
      status: STATUS_BY_CODE[error.code] ?? 400,
      body: { code: error.code, message: error.message, ...(error.details !== undefined && { details: error.details }) },
    };
  }
  if (error instanceof HttpException) {
    const response = error.getResponse();
    const given = typeof response === 'object' ? (response as { code?: string; message?: unknown }) : {};
    return {
      status: error.getStatus(),
      body: {
        code: given.code ?? httpCode(error.getStatus()),
        message: typeof given.message === 'string' ? given.message : error.message,
      },
    };
  }
  return { status: 500, body: { code: 'INTERNAL', message: 'The request failed on the server; the details are in the server log.' } };
}
