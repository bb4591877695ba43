import { Validator } from '@cfworker/json-schema';
import {
  createErrorHandler,
  type CustomValidator,
  type ErrorSchema,
  type ErrorTransformer,
  type FormContextType,
  type RJSFSchema,
  type RJSFValidationError,
  ROOT_SCHEMA_PREFIX,
  type StrictRJSFSchema,
  toErrorSchema,
  type UiSchema,
  unwrapErrorHandler,
  type ValidationData,
  validationDataMerge,
  type ValidatorType,
  withIdRefPrefix,
} from '@rjsf/utils';
import type { PayloadIssue } from '../api/types';
import { draftOf, dottedPath, type SchemaIssue, schemaIssues, validatorFor } from './json-schema';

/**
 * RJSF's validator, over @cfworker/json-schema (lib/json-schema.ts) instead of Ajv: Ajv compiles each
 * schema to a function with `new Function`, which the dashboard's CSP forbids, and so does
 * @rjsf/validator-ajv8. The form gets the same issues, in the same words, as the raw JSON editor.
 */
export class CfworkerValidator<
  T = unknown,
  S extends StrictRJSFSchema = RJSFSchema,
  F extends FormContextType = FormContextType,
> implements ValidatorType<T, S, F> {
  // A sub-schema RJSF asks about (an anyOf option) may $ref into the root: it is validated with the
  // root added under RJSF's own prefix, its refs prefixed to match (as RJSF's Ajv validator does).
  private readonly withRoot = new WeakMap<object, WeakMap<object, Validator>>();

  validateFormData(
    formData: T | undefined,
    schema: S,
    customValidate?: CustomValidator<T, S, F>,
    transformErrors?: ErrorTransformer<T, S, F>,
    uiSchema?: UiSchema<T, S, F>,
  ): ValidationData<T> {
    let errors = schemaIssues(asJson(formData), schema as never).map(toRjsfError);
    if (transformErrors) errors = transformErrors(errors, uiSchema);
    const errorSchema = toErrorSchema<T>(errors);
    if (!customValidate) return { errors, errorSchema };
    const handler = customValidate(formData, createErrorHandler<T>(formData as T), uiSchema, errorSchema);
    return validationDataMerge<T>({ errors, errorSchema }, unwrapErrorHandler<T>(handler));
  }

  isValid(schema: S, formData: T | undefined, rootSchema: S): boolean {
    if (typeof schema !== 'object' || schema === null) return schema !== false;
    return schemaIssues(asJson(formData), schema as never, this.validatorWithRoot(schema, rootSchema)).length === 0;
  }

  rawValidation<Result = unknown>(schema: S, formData?: T): { errors?: Result[]; validationError?: Error } {
    try {
      const value = asJson(formData);
      if (value === undefined) return {};
      return { errors: validatorFor(schema as never).validate(value).errors as Result[] };
    } catch (error) {
      return { validationError: error as Error };
    }
  }

  private validatorWithRoot(schema: object, rootSchema: object): Validator {
    let byRoot = this.withRoot.get(schema);
    if (!byRoot) this.withRoot.set(schema, (byRoot = new WeakMap()));
    let validator = byRoot.get(rootSchema);
    if (!validator) {
      validator = new Validator(withIdRefPrefix(structuredClone(schema) as never) as never, draftOf(rootSchema), false);
      validator.addSchema(structuredClone(rootSchema) as never, ROOT_SCHEMA_PREFIX);
      byRoot.set(rootSchema, validator);
    }
    return validator;
  }
}

/** The form's data as it would be sent: fields left empty (undefined) are not in the JSON. */
function asJson(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/**
 * The server's own issues with a payload it refused (paths as it spells them: `parcels.0.grams`, or
 * `items[0].name`), as RJSF's extra errors: each shown at its field, as the form's own are. The server
 * can refuse what the JSON Schema allows (a refinement the schema cannot express).
 */
export function serverErrorSchema(issues: PayloadIssue[]): ErrorSchema | undefined {
  if (issues.length === 0) return undefined;
  return toErrorSchema(
    issues.map((issue) =>
      toRjsfError({ segments: issue.path.split(/[.[\]]+/).filter(Boolean), keyword: 'server', message: issue.message }),
    ),
  );
}

function toRjsfError(issue: SchemaIssue): RJSFValidationError {
  const path = dottedPath(issue.segments);
  return {
    name: issue.keyword,
    // RJSF's dotted notation (`.items.0.name`), which its error schema is built from.
    property: issue.segments.length ? `.${issue.segments.join('.')}` : '',
    message: issue.message,
    params: {},
    stack: path ? `${path} ${issue.message}` : issue.message,
  };
}

/** One validator serves every form: it holds no state but its caches. */
export const cfworkerValidator = new CfworkerValidator();
