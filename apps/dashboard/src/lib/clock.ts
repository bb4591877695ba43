// Times come from the database clock. "deadline in 3 h" is computed against the server's clock,
// estimated from each response's Date header, so a laptop with a skewed clock still reads right.
// The header has one-second precision: offsets under two seconds are treated as noise.
let offsetMs = 0;

export function noteServerDate(header: string | null): void {
  const server = header ? Date.parse(header) : Number.NaN;
  if (Number.isNaN(server)) return;
  const offset = server - Date.now();
  offsetMs = Math.abs(offset) < 2_000 ? 0 : offset;
}

export function serverNow(): number {
  return Date.now() + offsetMs;
}
