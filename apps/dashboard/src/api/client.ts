import { noteServerDate } from '../lib/clock';
import { clearToken, getOperator, getToken } from './auth-token';
import type { ApiErrorBody, PayloadIssue } from './types';

/** A failed request: the server's `{ code, message, details }`, or one made up for network failures. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /**
   * The schema's complaints of an INVALID_PAYLOAD answer, each at its path, if any. An INVALID_ARGUMENT's
   * issues (`{ in, name, message }`, named in its message already) are not: the payload form placed them
   * at a path they lack, threw, and fell back to JSON with the error gone.
   */
  get issues(): PayloadIssue[] {
    const issues = (this.details as { issues?: unknown } | undefined)?.issues;
    if (this.code !== 'INVALID_PAYLOAD' || !Array.isArray(issues)) return [];
    return issues.filter((issue): issue is PayloadIssue => typeof (issue as Partial<PayloadIssue>)?.path === 'string');
  }
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

type QueryParams = Record<string, string | number | undefined>;

interface RequestOptions {
  query?: QueryParams;
  body?: unknown;
  signal?: AbortSignal;
}

// Relative to the page, so the UI works wherever the module mounts it (`/durable/`, `/ops/durable/`).
// Only `undefined` leaves a parameter out: '' is a value (a business key may be empty).
function apiUrl(path: string, query: QueryParams = {}): URL {
  const url = new URL(`./api${path}`, document.baseURI);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) url.searchParams.set(key, String(value));
  }
  return url;
}

async function request<T>(method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<T> {
  const token = getToken();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  // Who acts, for the run history: the name given at sign-in (percent-encoded: header values are Latin-1).
  const operator = getOperator();
  if (operator) headers['x-durable-operator'] = encodeURIComponent(operator);
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['x-durable-request'] = '1'; // a cross-site form cannot set it: the server's CSRF guard
  }
  let response: Response;
  try {
    response = await fetch(apiUrl(path, options.query), {
      method,
      headers,
      credentials: 'same-origin',
      body: method === 'POST' ? JSON.stringify(options.body ?? {}) : undefined,
      signal: options.signal,
    });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new ApiError(0, 'NETWORK', 'The server cannot be reached. Check the connection and that the application is running.');
  }
  noteServerDate(response.headers.get('date'));
  const body = await readBody(response);
  if (response.ok) return body as T;
  throw refusal(response, token, body);
}

/** The ApiError of a refused request; a 401 signs the operator out (today's token only). */
function refusal(response: Response, token: string | null, body: unknown): ApiError {
  // Only drop the token this request carried; a newer one typed meanwhile stays.
  if (response.status === 401 && token && token === getToken()) clearToken('The server refused the token. Enter it again.');
  const err = body as Partial<ApiErrorBody> | undefined;
  return new ApiError(
    response.status,
    typeof err?.code === 'string' ? err.code : `HTTP_${response.status}`,
    typeof err?.message === 'string' ? err.message : `${response.status} ${response.statusText || 'request failed'}`,
    err?.details,
  );
}

/**
 * A GET whose body is a stream (server-sent events), with the credentials of every call: EventSource
 * cannot send an Authorization header. Answers the response once its headers are in; a refusal throws
 * as `apiGet` does, a 401 signing the operator out.
 */
export async function apiStream(path: string, signal: AbortSignal): Promise<Response> {
  const token = getToken();
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (token) headers.authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(apiUrl(path), { headers, credentials: 'same-origin', cache: 'no-store', signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new ApiError(0, 'NETWORK', 'The server cannot be reached.');
  }
  noteServerDate(response.headers.get('date'));
  if (!response.ok) throw refusal(response, token, await readBody(response));
  if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
  await response.body?.cancel();
  throw new ApiError(response.status, 'NOT_AN_EVENT_STREAM', 'The answer is not an event stream (a proxy in the way?).');
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // a proxy's HTML error page: the status line says enough
  }
}

export function apiGet<T>(path: string, query?: QueryParams, signal?: AbortSignal): Promise<T> {
  return request<T>('GET', path, { query, signal });
}

export function apiPost<T>(path: string, body?: unknown): Promise<T> {
  return request<T>('POST', path, { body });
}

/** Path of one run; ids are free-form strings (`order-123`, even with `/`), hence the encoding. */
export function runPath(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}
