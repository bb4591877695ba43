import crypto from 'node:crypto';
import { Client } from 'pg';
import { DurableTestingModule } from 'nestjs-durable/testing';
import { First, Second } from '../fixtures/same-name.workflows';
import { databaseUrl } from '../setup/durable-app';

describe('DurableTestingModule.create that fails', () => {
  it('leaves no schema behind: a boot that fails drops the schema it migrated', async () => {
    // The schema's name is drawn at random: fixed here, so the test can look for it.
    const schema = 'test_f00dfacade01';
    const db = new Client(databaseUrl());
    await db.connect();
    try {
      await db.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      const drawn = jest.spyOn(crypto, 'randomBytes').mockImplementationOnce(() => Buffer.from(schema.slice('test_'.length), 'hex'));
      try {
        await expect(DurableTestingModule.create({ connection: databaseUrl(), providers: [First, Second] })).rejects.toThrow(
          /Two workflows are named "same-name"/,
        );
        expect(drawn).toHaveBeenCalledWith(6); // the schema the boot made was this one
      } finally {
        drawn.mockRestore();
      }
      expect((await db.query(`SELECT to_regnamespace($1) AS schema`, [schema])).rows).toEqual([{ schema: null }]);
    } finally {
      await db.end();
    }
  });
});
