import type { PayloadIssue } from '../api/types';
import { type JsonSchema, validateAgainstSchema } from './json-schema';

export type JsonInputCheck = { valid: true; value: unknown; issues: [] } | { valid: false; value?: undefined; issues: PayloadIssue[] };

/** Parses an editor's text and checks it against the schema, when there is one. */
export function checkJsonInput(text: string, schema?: JsonSchema): JsonInputCheck {
  if (!text.trim()) return { valid: false, issues: [{ path: '', message: 'Enter a JSON value, e.g. {} or null.' }] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { valid: false, issues: [{ path: '', message: `Not valid JSON: ${(error as Error).message}` }] };
  }
  const issues = validateAgainstSchema(value, schema);
  return issues.length ? { valid: false, issues } : { valid: true, value, issues: [] };
}
