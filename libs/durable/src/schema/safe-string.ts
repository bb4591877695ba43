/** Text for anything thrown, even what JSON and String refuse (a throwing toJSON or toString, a null prototype). */
export function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return Object.prototype.toString.call(value);
    }
  }
}
