/**
 * The JSON Schema of a class-validator DTO, for the dashboard's forms, by class-validator-jsonschema
 * (an optional peer, read from class-validator's own metadata). Nested DTOs come as `$defs`, only
 * those the class reaches. Undefined when the package is not installed or the class has no metadata:
 * the dashboard then offers the raw JSON editor, and the server still validates with class-validator.
 */
export function dtoJsonSchema(dto: Function): Record<string, unknown> | undefined {
  let convert: typeof import('class-validator-jsonschema').validationMetadatasToSchemas;
  try {
    convert = (require('class-validator-jsonschema') as typeof import('class-validator-jsonschema')).validationMetadatasToSchemas;
  } catch {
    return undefined;
  }
  const all = convert({ refPointerPrefix: '#/$defs/', classTransformerMetadataStorage: transformerMetadata() }) as Record<
    string,
    Record<string, unknown>
  >;
  const root = all[dto.name];
  if (!root) return undefined;
  const defs: Record<string, unknown> = {};
  const reach = (schema: unknown): void => {
    if (Array.isArray(schema)) return schema.forEach(reach);
    if (!schema || typeof schema !== 'object') return;
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' && typeof value === 'string') {
        const name = value.slice('#/$defs/'.length);
        if (!(name in defs) && all[name]) {
          defs[name] = all[name];
          reach(all[name]);
        }
      } else reach(value);
    }
  };
  reach(root);
  return { $schema: 'https://json-schema.org/draft/2020-12/schema', ...root, ...(Object.keys(defs).length && { $defs: defs }) };
}

/** class-transformer's metadata (`@Type(() => ParcelDto)`): what an array of nested DTOs holds. */
function transformerMetadata() {
  try {
    // Not among the package's exports: its storage module by path, typed from its own declaration.
    return (require('class-transformer/cjs/storage') as typeof import('class-transformer/types/storage')).defaultMetadataStorage;
  } catch {
    return undefined;
  }
}
