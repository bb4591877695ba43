import { BadRequestException } from '@nestjs/common';

/** Small checks of request bodies: a wrong type is a 400 naming the field, never a 500 later. */
export function bodyObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badRequest('The request body must be a JSON object.');
  }
  return body as Record<string, unknown>;
}

export function requiredString(body: Record<string, unknown>, field: string, max = 200): string {
  const value = body[field];
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    throw badRequest(`"${field}" must be a non-empty string of at most ${max} characters.`);
  }
  return value;
}

export function optionalString(body: Record<string, unknown>, field: string, max = 200): string | undefined {
  return body[field] === undefined || body[field] === null ? undefined : requiredString(body, field, max);
}

export function requiredKey(body: Record<string, unknown>, field: string): unknown {
  if (!(field in body)) throw badRequest(`The body needs a "${field}" field (null is allowed).`);
  return body[field];
}

export function badRequest(message: string): BadRequestException {
  return new BadRequestException({ code: 'INVALID_ARGUMENT', message });
}
