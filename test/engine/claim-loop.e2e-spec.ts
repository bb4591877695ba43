import { RunRepository } from 'nestjs-durable/persistence/run.repository';
import { DurableWorker } from 'nestjs-durable/worker/durable.worker';
import { Db, DurableTestApp, eventually, startApp, uniqueSchema } from '../setup/durable-app';

/** Resolves after `n` turns of the microtask queue. */
const microtasks = (n: number) => Array.from({ length: n }).reduce<Promise<void>>((p) => p.then(() => undefined), Promise.resolve());

describe('the claim loop', () => {
  const schema = uniqueSchema();
  const db = new Db(schema);
  let t: DurableTestApp;

  beforeAll(async () => {
    // No sweeper and no runs: every claim pass is one this test asks for.
    t = await startApp({ schema, options: { sweeper: false } });
  });
  afterAll(async () => {
    await t.close();
    await db.dropSchema();
  });

  it("a nudge arriving at any microtask after a pass's last claim, the gap before the pass is cleared included, gets a pass of its own", async () => {
    const worker = t.get(DurableWorker);
    const runs = t.get(RunRepository);
    const claim = runs.claim.bind(runs);
    let claims = 0;
    let afterClaim: (() => void) | undefined;
    runs.claim = async (...args) => {
      const claimed = await claim(...args);
      claims++;
      afterClaim?.();
      afterClaim = undefined;
      return claimed;
    };
    await worker.drain();
    // Walk the nudge through every microtask from the claim's answer to well past the pass's end.
    for (let turn = 0; turn < 30; turn++) {
      const before = claims;
      afterClaim = () => void microtasks(turn).then(() => worker.nudge());
      worker.nudge();
      await eventually(async () => claims >= before + 2, `a claim pass for the nudge made ${turn} microtasks after a claim`, 3_000);
      await worker.drain();
    }
  });
});
