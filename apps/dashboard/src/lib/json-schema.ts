import type { PayloadIssue } from '../api/types';

/**
 * A small JSON Schema checker for the payload editors: type, required, properties,
 * additionalProperties (false), enum, const, anyOf, minimum/maximum (and exclusive), minLength,
 * maxLength, pattern, items, minItems/maxItems. Other keywords are ignored: the server validates with
 * the real schema anyway; this only catches mistakes before sending.
 */
export type JsonSchema = boolean | { [keyword: string]: unknown };

type SchemaObject = { [keyword: string]: unknown };

export function validateAgainstSchema(value: unknown, schema: JsonSchema | undefined): PayloadIssue[] {
  const issues: PayloadIssue[] = [];
  if (schema !== undefined) check(value, schema, '', issues);
  return issues;
}

function check(value: unknown, schema: JsonSchema, path: string, issues: PayloadIssue[]): void {
  if (schema === true) return;
  const add = (message: string): void => void issues.push({ path, message });
  if (schema === false) return add('no value is allowed here');

  const types = typeList(schema.type);
  if (types && !types.some((t) => hasType(value, t))) return add(`expected ${types.join(' or ')}, got ${typeName(value)}`);

  if (Array.isArray(schema.enum) && !schema.enum.some((option) => sameJson(option, value))) {
    add(`must be one of ${schema.enum.map((o) => JSON.stringify(o)).join(', ')}`);
  }
  if ('const' in schema && !sameJson(schema.const, value)) add(`must be ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((branch) => validateAgainstSchema(value, branch as JsonSchema).length === 0)) {
    add('does not match any of the allowed shapes');
  }

  if (typeof value === 'number') checkNumber(value, schema, add);
  if (typeof value === 'string') checkString(value, schema, add);
  if (Array.isArray(value)) checkArray(value, schema, path, issues, add);
  else if (isObject(value)) checkObject(value, schema, path, issues);
}

function checkNumber(value: number, schema: SchemaObject, add: (message: string) => void): void {
  const { minimum, maximum, exclusiveMinimum, exclusiveMaximum } = schema;
  if (typeof minimum === 'number' && value < minimum) add(`must be ≥ ${minimum}`);
  if (typeof maximum === 'number' && value > maximum) add(`must be ≤ ${maximum}`);
  if (typeof exclusiveMinimum === 'number' && value <= exclusiveMinimum) add(`must be > ${exclusiveMinimum}`);
  if (typeof exclusiveMaximum === 'number' && value >= exclusiveMaximum) add(`must be < ${exclusiveMaximum}`);
}

function checkString(value: string, schema: SchemaObject, add: (message: string) => void): void {
  const length = [...value].length; // code points, as JSON Schema counts
  if (typeof schema.minLength === 'number' && length < schema.minLength) add(`must have at least ${schema.minLength} characters`);
  if (typeof schema.maxLength === 'number' && length > schema.maxLength) add(`must have at most ${schema.maxLength} characters`);
  if (typeof schema.pattern === 'string') {
    try {
      if (!new RegExp(schema.pattern, 'u').test(value)) add(`must match ${schema.pattern}`);
    } catch {
      // a pattern this browser cannot compile: leave it to the server
    }
  }
}

function checkArray(value: unknown[], schema: SchemaObject, path: string, issues: PayloadIssue[], add: (m: string) => void): void {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) add(`must have at least ${schema.minItems} items`);
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) add(`must have at most ${schema.maxItems} items`);
  const items = schema.items;
  if (items === undefined || Array.isArray(items)) return;
  value.forEach((item, index) => check(item, items as JsonSchema, `${path}[${index}]`, issues));
}

function checkObject(value: Record<string, unknown>, schema: SchemaObject, path: string, issues: PayloadIssue[]): void {
  const properties = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
  const join = (key: string) => (path ? `${path}.${key}` : key);
  if (Array.isArray(schema.required)) {
    for (const key of schema.required) {
      if (typeof key === 'string' && !(key in value)) issues.push({ path: join(key), message: 'is required' });
    }
  }
  for (const [key, item] of Object.entries(value)) {
    if (key in properties) check(item, properties[key], join(key), issues);
    else if (schema.additionalProperties === false) issues.push({ path: join(key), message: 'is not an allowed property' });
    else if (isObject(schema.additionalProperties)) check(item, schema.additionalProperties as JsonSchema, join(key), issues);
  }
}

function typeList(type: unknown): string[] | undefined {
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return undefined;
}

function hasType(value: unknown, type: string): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isObject(value);
    default:
      return true; // an unknown type name: not ours to refuse
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every((key) => sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}
