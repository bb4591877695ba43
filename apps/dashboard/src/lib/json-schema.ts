import { type OutputUnit, type SchemaDraft, Validator } from '@cfworker/json-schema';
import type { PayloadIssue } from '../api/types';

/**
 * Payloads checked against a declared JSON Schema before they are sent, with @cfworker/json-schema:
 * a complete validator (every keyword of drafts 4 to 2020-12, formats, $ref) that interprets the
 * schema instead of compiling it to code, so it runs under the page's CSP (`script-src 'self'`, no
 * eval), where Ajv cannot. The server validates again with the real schema (a zod refinement JSON
 * Schema cannot express); this catches the rest before a round trip.
 */
export type JsonSchema = boolean | { [keyword: string]: unknown };

/** One complaint: where (the path's segments, `[]` for the value itself), which keyword, and what to do. */
export interface SchemaIssue {
  segments: string[];
  keyword: string;
  message: string;
}

// Compiled once per schema object. The validator marks the schema objects it reads, so it gets a copy of its own.
const compiled = new WeakMap<object, Validator>();

export function draftOf(schema: { $schema?: unknown }): SchemaDraft {
  const uri = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (uri.includes('draft-04')) return '4';
  if (uri.includes('draft-06') || uri.includes('draft-07')) return '7';
  if (uri.includes('2019-09')) return '2019-09';
  return '2020-12'; // zod's toJSONSchema, and the default for a schema that does not say
}

/** The validator of `schema`, compiled on first use. */
export function validatorFor(schema: JsonSchema): Validator {
  if (typeof schema === 'boolean') return new Validator(schema);
  let validator = compiled.get(schema);
  if (!validator) compiled.set(schema, (validator = new Validator(structuredClone(schema), draftOf(schema), false)));
  return validator;
}

/** Keywords whose failure only says that one of their sub-schemas failed: the sub-schema's own error says what. */
const WRAPPERS = new Set([
  'properties',
  'patternProperties',
  'additionalProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'contains',
  'dependentSchemas',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  '$ref',
  '$recursiveRef',
  'allOf',
  'if',
  'then',
  'else',
]);

/**
 * What is wrong with `value` under `schema`, each issue once and in words ("is required", "must have
 * at least 1 character"). Empty when it passes, and when the schema cannot be read here (a pattern
 * this browser cannot compile): the server decides then.
 */
export function schemaIssues(value: unknown, schema: JsonSchema | undefined, validator?: Validator): SchemaIssue[] {
  if (schema === undefined || value === undefined) return [];
  let units: OutputUnit[];
  try {
    units = (validator ?? validatorFor(schema)).validate(value).errors;
  } catch {
    return [];
  }
  const issues: SchemaIssue[] = [];
  const seen = new Set<string>();
  const formatAt = new Set(units.filter((u) => u.keyword === 'format').map((u) => u.instanceLocation));
  for (const unit of units) {
    // An alternative's own failures say nothing once no alternative matched: that is the error.
    if (WRAPPERS.has(unit.keyword) || /\/(anyOf|oneOf)\/\d+\//.test(unit.keywordLocation)) continue;
    // A format says it better than the pattern zod writes beside it.
    if (unit.keyword === 'pattern' && formatAt.has(unit.instanceLocation)) continue;
    const segments = pointerSegments(unit.instanceLocation);
    if (unit.keyword === 'required') {
      const missing = /"((?:[^"\\]|\\.)*)"/.exec(unit.error)?.[1];
      if (missing !== undefined) segments.push(missing);
    }
    const message = wordsFor(unit, typeof schema === 'object' ? schema : {}, value, segments);
    const id = `${segments.join('/')}|${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push({ segments, keyword: unit.keyword, message });
  }
  return issues;
}

/** The payload editors' issues: paths as `items[0].name`. */
export function validateAgainstSchema(value: unknown, schema: JsonSchema | undefined): PayloadIssue[] {
  return schemaIssues(value, schema).map((issue) => ({ path: dottedPath(issue.segments), message: issue.message }));
}

export function dottedPath(segments: string[]): string {
  return segments.reduce((path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment), '');
}

function pointerSegments(location: string): string[] {
  const pointer = location.replace(/^#/, '');
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((part) => decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The keyword's value in the schema, where its location can be followed (not through a $ref). */
function keywordValue(schema: object, location: string): unknown {
  let node: unknown = schema;
  for (const part of pointerSegments(location)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part];
  }
  return node;
}

function valueAt(value: unknown, segments: string[]): unknown {
  return segments.reduce<unknown>(
    (node, part) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined),
    value,
  );
}

function wordsFor(unit: OutputUnit, schema: object, value: unknown, segments: string[]): string {
  const rule = keywordValue(schema, unit.keywordLocation);
  const known = rule !== undefined;
  const json = (v: unknown) => JSON.stringify(v);
  const count = (n: unknown, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
  switch (unit.keyword) {
    case 'required':
      return 'is required';
    case 'type': {
      const types = Array.isArray(rule) ? rule : [rule];
      return known ? `expected ${types.join(' or ')}, got ${typeName(valueAt(value, segments))}` : unit.error;
    }
    case 'enum':
      return known && Array.isArray(rule) ? `must be one of ${rule.map(json).join(', ')}` : unit.error;
    case 'const':
      return known ? `must be ${json(rule)}` : unit.error;
    case 'minimum':
      return known ? `must be ≥ ${rule}` : unit.error;
    case 'maximum':
      return known ? `must be ≤ ${rule}` : unit.error;
    case 'exclusiveMinimum':
      return known && typeof rule === 'number' ? `must be > ${rule}` : unit.error;
    case 'exclusiveMaximum':
      return known && typeof rule === 'number' ? `must be < ${rule}` : unit.error;
    case 'multipleOf':
      return known ? `must be a multiple of ${rule}` : unit.error;
    case 'minLength':
      return known ? `must have at least ${count(rule, 'character')}` : unit.error;
    case 'maxLength':
      return known ? `must have at most ${count(rule, 'character')}` : unit.error;
    case 'minItems':
      return known ? `must have at least ${count(rule, 'item')}` : unit.error;
    case 'maxItems':
      return known ? `must have at most ${count(rule, 'item')}` : unit.error;
    case 'uniqueItems':
      return 'must not repeat an item';
    case 'pattern':
      return known && typeof rule === 'string' && rule.length <= 60 ? `must match ${rule}` : 'does not have the expected form';
    case 'format':
      return known ? `must be a valid ${rule}` : unit.error;
    case 'anyOf':
      return 'does not match any of the allowed shapes';
    case 'oneOf':
      return 'must match exactly one of the allowed shapes';
    case 'not':
      return 'matches a shape that is not allowed';
    case 'false':
      return 'is not allowed here';
    default:
      return unit.error;
  }
}

function typeName(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}
