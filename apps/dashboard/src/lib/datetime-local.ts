// An <input type="datetime-local"> holds a wall-clock time without an offset, read in the browser's zone.

/** 'YYYY-MM-DDTHH:mm' in the browser's zone, as the input holds it; with `seconds`, 'YYYY-MM-DDTHH:mm:ss' (an input with `step="1"`). */
export function toLocalInput(ms: number, seconds = false): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  const minute = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return seconds ? `${minute}:${pad(d.getSeconds())}` : minute;
}

/** The input's value as an instant (ms since the epoch); undefined when empty or unreadable. */
export function fromLocalInput(value: string): number | undefined {
  const ms = new Date(value).getTime(); // without an offset, it reads as local time
  return value && !Number.isNaN(ms) ? ms : undefined;
}
