import cronstrue from 'cronstrue';

/**
 * A cron in words with the zone it is read in: "At 09:00 AM, Monday through Friday (Europe/Paris)".
 * Where cronstrue cannot read it (a nickname such as `@daily`), the cron itself.
 */
export function describeCron(cron: string, timezone: string): string {
  let words: string;
  try {
    words = cronstrue.toString(cron);
  } catch {
    words = cron; // cronstrue throws a string; the server validated the cron already
  }
  return `${words} (${timezone})`;
}
