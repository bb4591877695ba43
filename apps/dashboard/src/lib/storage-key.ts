/**
 * A browser storage key for this dashboard. It carries the mount path, so two dashboards on one
 * origin (say /durable/ and /ops/durable/) keep their own.
 */
export function storageKey(name: string): string {
  return `nestjs-durable.${name}:${new URL('./', document.baseURI).pathname}`;
}
