import type { INestApplicationContext } from '@nestjs/common';
import { DeliveryRepository } from 'nestjs-durable/persistence/delivery.repository';

/**
 * The library with one guarantee broken on purpose (`npm run chaos -- --break <name>`), to show that
 * the checker fails on it: evidence that can fail. Each break patches the library inside the chaos
 * processes only, after the application is built, and throws at boot when the code it patches has
 * changed (a break that silently does nothing would prove nothing). break.e2e-spec.ts keeps it a test.
 */
export const BREAKS = {
  /**
   * Signal deduplication skipped: a redelivered signal overwrites the stored payload (the last one
   * wins, not the first), is journaled again and answered `accepted`, as if the statement said
   * `DO UPDATE` where it says `DO NOTHING`.
   */
  'signal-dedup': (app: INestApplicationContext) => {
    const repository = app.get(DeliveryRepository, { strict: false }) as unknown as { sql: { signal: string } };
    const dedup = 'ON CONFLICT (run_id, name, run_day) DO NOTHING';
    if (!repository.sql.signal.includes(dedup))
      throw new Error(`The break signal-dedup no longer applies: the signal statement has no "${dedup}". Update test/chaos/breaks.ts.`);
    repository.sql.signal = repository.sql.signal.replace(
      dedup,
      'ON CONFLICT (run_id, name, run_day) DO UPDATE SET payload = EXCLUDED.payload',
    );
  },
} satisfies Record<string, (app: INestApplicationContext) => void>;

export type BreakName = keyof typeof BREAKS;

export function isBreak(name: string): name is BreakName {
  return Object.hasOwn(BREAKS, name);
}
