import type { JsonSchemaObject } from '../api/types';
import { JsonBlock } from './json-block';
import styles from './schema-view.module.css';

/** A declared JSON Schema, folded by default: names first, details on demand. */
export function SchemaView({ schema }: { schema: JsonSchemaObject | undefined }) {
  if (!schema) return <span className={styles.none}>no schema</span>;
  return (
    <details className={styles.details}>
      <summary>JSON Schema</summary>
      <JsonBlock value={schema} compact />
    </details>
  );
}
