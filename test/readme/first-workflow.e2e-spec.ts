import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import * as ts from 'typescript';
import { SignalService, WorkflowClient } from 'nestjs-durable';
import { databaseUrl, Db, eventually } from '../setup/durable-app';

const ROOT = join(__dirname, '..', '..');

/** The README's first workflow, exactly as written there (the first ```ts block after its marker). */
function firstWorkflowSnippet(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const marker = readme.indexOf('<!-- first-workflow:');
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(marker));
  if (marker < 0 || !match) throw new Error('README.md has no first-workflow snippet');
  return match[1];
}

describe("the README's first workflow", () => {
  const schema = 'durable'; // the snippet uses the default schema; this file is the only one that does
  const db = new Db(schema);
  afterAll(() => db.dropSchema());

  it('is under 25 lines, compiles, and runs: welcome mail, signal, sleep (resumed), onboarded', async () => {
    const snippet = firstWorkflowSnippet();
    expect(snippet.trim().split('\n').length).toBeLessThanOrEqual(25);
    const dir = join(ROOT, 'test/readme/.generated');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'first-workflow.ts');
    writeFileSync(file, snippet);
    // Type-checked with the workspace's compiler options, as a user's project would compile it.
    const config = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
    )!;
    const program = ts.createProgram([file], { ...config.options, noEmit: true });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
    process.env.DATABASE_URL = databaseUrl();
    const generated = './.generated/first-workflow'; // written above: a path the typecheck cannot resolve before the test runs
    const { AppModule, Onboarding, EmailVerified } = await import(generated);

    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      const workflows = app.get(WorkflowClient);
      const signals = app.get(SignalService);
      const run = await workflows.start(Onboarding, { email: 'ada@example.com' });
      await eventually(async () => (await workflows.getRun(run.runId)).waiting?.kind === 'signal', 'the run to wait for the signal');
      await signals.signal(run.runId, EmailVerified, { at: new Date().toISOString() });
      await eventually(async () => (await workflows.getRun(run.runId)).waiting?.kind === 'sleep', 'the run to sleep');
      await workflows.resume(run.runId); // end the one-day cool-down now
      expect(await run.result({ timeout: '10s' })).toBe('onboarded');
      const [mail] = await db.query(`SELECT result FROM durable.steps WHERE run_id = $1 AND key = 'sendWelcome'`, [run.runId]);
      expect(JSON.parse(mail.result).to).toBe('ada@example.com');
    } finally {
      await app.close();
    }
  }, 120_000); // type-checking the snippet against the whole library takes tens of seconds on a busy 2-core machine
});
