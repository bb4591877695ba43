/**
 * The query's answer, or null when it fails or has not answered within `ms`: a probe (a gauge, the
 * health check) must answer its caller even when the database hangs (a dropped connection waits on
 * TCP retransmits for minutes, which no statement timeout ends).
 */
function answeredWithin<T>(query: Promise<T | null>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms).unref()));
  return Promise.race([query.catch(() => null), late]).finally(() => clearTimeout(timer));
}

/**
 * A probe whose callers share one query: an answer is reused for `reuseMs` (one scrape's gauges), and a
 * query still unanswered is waited on again, not sent a second time, until it is older than
 * `abandonAfterMs` (a statement may run that long; one whose answer was lost to dropped packets is then
 * given up). So a hung database holds one connection, not one more per caller. Each caller waits at
 * most `waitMs` (null: no answer).
 */
export function sharedProbe<T>(
  query: () => Promise<T>,
  { waitMs, abandonAfterMs, reuseMs }: { waitMs: number; abandonAfterMs: number; reuseMs: number },
) {
  let latest: { at: number; settled: boolean; answer: Promise<T | null> } | undefined;
  return (): Promise<T | null> => {
    if (!latest || (latest.settled ? Date.now() - latest.at >= reuseMs : Date.now() - latest.at > abandonAfterMs)) {
      const asked = { at: Date.now(), settled: false, answer: query().catch(() => null) };
      void asked.answer.then(() => (asked.settled = true));
      latest = asked;
    }
    return answeredWithin(latest.answer, waitMs);
  };
}

/** How long an unanswered probe is waited on before it is sent again: as long as a statement may run (a minute without a statement timeout). */
export function probeAbandonMs(statementTimeoutMs: number | undefined): number {
  return statementTimeoutMs || 60_000;
}
