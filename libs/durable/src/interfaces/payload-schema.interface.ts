import type { Type } from '@nestjs/common';
import type { StandardSchemaV1 } from '@standard-schema/spec';

/** A Standard Schema object (zod, valibot, arktype…) or a class-validator DTO class. */
export type PayloadSchema<T = unknown> = StandardSchemaV1<unknown, T> | Type<T & object>;

/** The type a schema accepts: a Standard Schema's output, or the DTO class's instance type. */
export type SchemaOutput<S> = S extends StandardSchemaV1<unknown, infer O> ? O : S extends Type<infer I> ? I : unknown;
