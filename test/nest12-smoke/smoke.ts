/**
 * NestJS 12 smoke: the workspace builds and tests on NestJS 11 (CommonJS, so jest loads it as is);
 * this boots the other supported major, NestJS 12 (ES modules only, loaded here through Node's
 * require(esm)), with the packed library, and runs a workflow with a step and a signal.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DurableModule, DurableWorkflow, SignalService, Step, Workflow, WorkflowClient, WorkflowContext } from 'nestjs-durable';

@Workflow('nest12-smoke')
class Smoke implements DurableWorkflow<{ name: string }, string> {
  async run(input: { name: string }, ctx: WorkflowContext): Promise<string> {
    const greeting = await this.greet(input.name);
    const reply = await ctx.waitForSignal<string>('reply');
    return `${greeting} / ${reply}`;
  }

  @Step()
  async greet(name: string): Promise<string> {
    return `hello ${name}`;
  }
}

const schema = `nest12_${process.pid}`;

@Module({
  imports: [DurableModule.forRoot({ connection: process.env.DATABASE_URL!, schema, inlineWaitMs: 100 })],
  providers: [Smoke],
})
class SmokeModule {}

async function main(): Promise<void> {
  const core = require('@nestjs/core/package.json') as { version: string };
  const app = await NestFactory.createApplicationContext(SmokeModule, { logger: ['error'] });
  try {
    const handle = await app.get(WorkflowClient).start(Smoke, { name: 'nest 12' });
    for (let i = 0; i < 100 && (await handle.status()) !== 'waiting'; i++) await new Promise((r) => setTimeout(r, 50));
    await app.get(SignalService).signal(handle.runId, 'reply', 'signal received');
    const output = await handle.result({ timeout: '10s' });
    if (output !== 'hello nest 12 / signal received') throw new Error(`unexpected output ${JSON.stringify(output)}`);
    console.log(`NestJS ${core.version}: workflow completed with "${output}"`);
  } finally {
    await app.get<import('typeorm').DataSource>('DURABLE_DATA_SOURCE').query(`DROP SCHEMA "${schema}" CASCADE`);
    await app.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
