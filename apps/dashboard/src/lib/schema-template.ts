import type { JsonSchema } from './json-schema';

type SchemaObject = { [keyword: string]: unknown };

/**
 * A starting payload for a declared JSON Schema, meant to pass it: the schema's own `default`, `const`,
 * first example or first enum value where it gives one; else, for an object, its required properties
 * (and those with a default), each filled the same way; a number at its minimum (0 when allowed), a
 * boolean false, a string empty, or a placeholder of the shortest allowed length, or a sample of its
 * format (an email address, a date-time of now). A pattern cannot be met in general: the form then
 * shows what to fix.
 */
export function templateFor(schema: JsonSchema | undefined, root: JsonSchema | undefined = schema, depth = 0): unknown {
  if (schema === undefined || typeof schema === 'boolean') return depth === 0 ? {} : null;
  if (depth > 8) return null; // a recursive schema: stop
  const s = resolve(schema, root);
  if ('default' in s) return s.default;
  if ('const' in s) return s.const;
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  const choice = firstOf(s.anyOf) ?? firstOf(s.oneOf);
  if (choice !== undefined) return templateFor(choice, root, depth + 1);
  if (Array.isArray(s.allOf)) {
    const parts = s.allOf.map((part) => templateFor(part as JsonSchema, root, depth + 1));
    if (parts.every(isPlainObject)) return Object.assign({}, ...parts, objectTemplate(s, root, depth));
  }
  switch (typeOf(s)) {
    case 'object':
      return objectTemplate(s, root, depth);
    case 'array':
      return arrayTemplate(s, root, depth);
    case 'string':
      return stringTemplate(s);
    case 'integer':
      return numberTemplate(s, true);
    case 'number':
      return numberTemplate(s, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return depth === 0 ? {} : null;
  }
}

/**
 * Whether a form can be built from the schema: it says what shape the payload has (a type, properties,
 * choices). `{}` or `true` (anything goes) gets the JSON editor only.
 */
export function formable(schema: JsonSchema | undefined): schema is SchemaObject {
  if (schema === undefined || typeof schema === 'boolean') return false;
  return ['type', 'properties', 'enum', 'const', 'anyOf', 'oneOf', 'allOf', '$ref'].some((keyword) => keyword in schema);
}

function resolve(schema: SchemaObject, root: JsonSchema | undefined): SchemaObject {
  const ref = schema.$ref;
  if (typeof ref !== 'string' || !ref.startsWith('#') || typeof root !== 'object') return schema;
  let node: unknown = root;
  for (const part of ref.slice(2).split('/').filter(Boolean)) {
    if (node === null || typeof node !== 'object') return schema;
    node = (node as SchemaObject)[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  if (node === null || typeof node !== 'object') return schema;
  const { $ref: _ref, ...rest } = schema;
  return { ...(node as SchemaObject), ...rest };
}

function firstOf(list: unknown): JsonSchema | undefined {
  if (!Array.isArray(list) || list.length === 0) return undefined;
  // A nullable choice (`T | null`) starts on T: null says nothing to fill in.
  return (list.find((option) => !(isPlainObject(option) && option.type === 'null')) ?? list[0]) as JsonSchema;
}

function typeOf(s: SchemaObject): string | undefined {
  if (typeof s.type === 'string') return s.type;
  if (Array.isArray(s.type)) return (s.type.find((t) => t !== 'null') ?? s.type[0]) as string | undefined;
  if (isPlainObject(s.properties)) return 'object';
  if (s.items !== undefined || s.prefixItems !== undefined) return 'array';
  return undefined;
}

function objectTemplate(s: SchemaObject, root: JsonSchema | undefined, depth: number): Record<string, unknown> {
  const properties = isPlainObject(s.properties) ? (s.properties as Record<string, JsonSchema>) : {};
  const required = new Set(Array.isArray(s.required) ? s.required.filter((k): k is string => typeof k === 'string') : []);
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(properties)) {
    const hasDefault = isPlainObject(property) && 'default' in property;
    if (required.has(name) || hasDefault) out[name] = templateFor(property, root, depth + 1);
  }
  for (const name of required) if (!(name in out)) out[name] = null; // required but undescribed
  return out;
}

function arrayTemplate(s: SchemaObject, root: JsonSchema | undefined, depth: number): unknown[] {
  const prefix = Array.isArray(s.prefixItems) ? (s.prefixItems as JsonSchema[]) : Array.isArray(s.items) ? (s.items as JsonSchema[]) : [];
  const items = Array.isArray(s.items) ? undefined : (s.items as JsonSchema | undefined);
  const count = typeof s.minItems === 'number' ? s.minItems : 0;
  return Array.from({ length: Math.max(count, 0) }, (_, i) => templateFor(prefix[i] ?? items ?? true, root, depth + 1));
}

const FORMAT_SAMPLES: Record<string, () => string> = {
  'date-time': () => new Date().toISOString(),
  date: () => new Date().toISOString().slice(0, 10),
  time: () => '00:00:00Z',
  email: () => 'user@example.com',
  uri: () => 'https://example.com',
  url: () => 'https://example.com',
  uuid: () => '00000000-0000-4000-8000-000000000000',
  hostname: () => 'example.com',
  ipv4: () => '127.0.0.1',
  ipv6: () => '::1',
};

function stringTemplate(s: SchemaObject): string {
  const sample = typeof s.format === 'string' ? FORMAT_SAMPLES[s.format] : undefined;
  if (sample) return sample();
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  return 'x'.repeat(min);
}

function numberTemplate(s: SchemaObject, integer: boolean): number {
  const step = typeof s.multipleOf === 'number' && s.multipleOf > 0 ? s.multipleOf : integer ? 1 : undefined;
  let low = typeof s.minimum === 'number' ? s.minimum : undefined;
  if (typeof s.exclusiveMinimum === 'number') low = Math.max(low ?? -Infinity, s.exclusiveMinimum + (step ?? 1));
  const high =
    typeof s.maximum === 'number' ? s.maximum : typeof s.exclusiveMaximum === 'number' ? s.exclusiveMaximum - (step ?? 1) : undefined;
  let value = low !== undefined && low > 0 ? low : high !== undefined && high < 0 ? high : 0;
  if (step) value = Math.ceil(value / step) * step;
  if (integer) value = Math.ceil(value);
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
