/**
 * Plain JSON for people and scripts: a Date becomes its ISO string, a BigInt its digits, a Map an
 * object (or a list of pairs when a key is not a string), a Set a list, a Buffer { base64 },
 * undefined is left out, NaN and the infinities become strings.
 */
export function toDisplay(value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null;
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? value : String(value);
    case 'string':
    case 'boolean':
      return value;
    case 'object':
      break;
    default:
      return String(value);
  }
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return { base64: value.toString('base64') };
  if (Array.isArray(value)) return value.map(toDisplay);
  if (value instanceof Set) return [...value].map(toDisplay);
  if (value instanceof Map) {
    const entries = [...value.entries()];
    return entries.every(([k]) => typeof k === 'string')
      ? Object.fromEntries(entries.map(([k, v]) => [k, toDisplay(v)]))
      : entries.map(([k, v]) => [toDisplay(k), toDisplay(v)]);
  }
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (item !== undefined)
      Object.defineProperty(out, key, { value: toDisplay(item), enumerable: true, writable: true, configurable: true });
  }
  return out;
}
