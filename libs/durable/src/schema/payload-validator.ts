import type { StandardSchemaV1 } from '@standard-schema/spec';
import { InvalidArgumentError, InvalidPayloadError, PayloadIssue } from '../errors';
import type { PayloadSchema } from '../interfaces';
import { dtoJsonSchema } from './dto-json-schema';

/**
 * Validates a payload against a PayloadSchema and returns the value to store: a Standard Schema's
 * output (defaults and coercions applied), or the plain payload when a class-validator DTO accepts it.
 */
export async function validatePayload(schema: PayloadSchema | undefined, value: unknown, what: string): Promise<unknown> {
  if (!schema) return value;
  if (isStandardSchema(schema)) {
    const result = await schema['~standard'].validate(value);
    if (result.issues) throw new InvalidPayloadError(what, result.issues.map(toIssue));
    return result.value;
  }
  const issues = await validateDto(schema as new () => object, value);
  if (issues.length) throw new InvalidPayloadError(what, issues);
  return value;
}

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === 'object' && schema !== null && '~standard' in schema;
}

/** A JSON Schema for the dashboard's form, where the schema can produce one (a Standard Schema's converter, or a DTO's metadata). */
export function jsonSchemaOf(schema: PayloadSchema | undefined): Record<string, unknown> | undefined {
  if (!schema) return undefined;
  if (!isStandardSchema(schema)) return typeof schema === 'function' ? dtoJsonSchema(schema) : undefined;
  const converter = (schema['~standard'] as { jsonSchema?: { input(o: { target: string }): Record<string, unknown> } }).jsonSchema;
  try {
    return converter?.input({ target: 'draft-2020-12' });
  } catch {
    return undefined; // schemas with transforms or custom types may have no JSON Schema; the form is then free text
  }
}

function toIssue(issue: StandardSchemaV1.Issue): PayloadIssue {
  const path = (issue.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.');
  return { path, message: issue.message };
}

async function validateDto(dto: new () => object, value: unknown): Promise<PayloadIssue[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{ path: '', message: `expected an object for ${dto.name}` }];
  }
  const { plainToInstance } = loadPeer<typeof import('class-transformer')>('class-transformer');
  const { validate } = loadPeer<typeof import('class-validator')>('class-validator');
  const errors = await validate(plainToInstance(dto, value) as object, { forbidUnknownValues: true });
  const issues: PayloadIssue[] = [];
  const walk = (list: typeof errors, prefix: string) => {
    for (const error of list) {
      const path = prefix ? `${prefix}.${error.property}` : error.property;
      for (const message of Object.values(error.constraints ?? {})) issues.push({ path, message });
      walk(error.children ?? [], path);
    }
  };
  walk(errors, '');
  return issues;
}

function loadPeer<T>(name: string): T {
  try {
    return require(name) as T;
  } catch {
    throw new InvalidArgumentError(`A DTO class is used as a payload schema, which needs the package "${name}": npm install ${name}.`);
  }
}
