/**
 * The query's answer, or null when it fails or has not answered within `ms`: a probe (a gauge, the
 * health check) must answer its caller even when the database hangs (a dropped connection waits on
 * TCP retransmits for minutes, which no statement timeout ends).
 */
export function answeredWithin<T>(query: Promise<T | null>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms).unref()));
  return Promise.race([query.catch(() => null), late]).finally(() => clearTimeout(timer));
}
