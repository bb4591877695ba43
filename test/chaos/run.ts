/**
 * The chaos harness: `npm run chaos -- --profile ci|soak [--minutes N] [--seed N] [--plan] [--keep]`,
 * or `--recheck <dir>` to run the checker again over a kept session. `--phases N` runs only the first
 * N phases, `--break NAME` breaks a guarantee of the library on purpose (breaks.ts): both must fail.
 * Exits non-zero on any violated promise, printing the seed that replays the schedule.
 */
import { recheck, runChaos } from './harness';
import { planPhase } from './plan';
import { parseOptions } from './profiles';

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.recheck) return recheck(options.recheck);
  if (options.planOnly) {
    options.profile.cycle.forEach((spec, index) => console.log(JSON.stringify(planPhase(options.seed, index, spec, options.profile))));
    return 0;
  }
  return runChaos(options);
}

/** Exits once stdout is flushed (a pipe loses what process.exit cuts off). */
function exit(code: number): void {
  process.stdout.write('', () => process.exit(code));
}

main().then(exit, (error: Error) => {
  console.error(error.message);
  exit(2);
});
