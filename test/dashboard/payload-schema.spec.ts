import { toJSONSchema, z } from 'zod';
import { validateAgainstSchema } from '../../apps/dashboard/src/lib/json-schema';
import { formable, templateFor } from '../../apps/dashboard/src/lib/schema-template';

// The signal and message forms: the template they open on, and the checks they make before sending
// (@cfworker/json-schema, no eval), on the JSON Schemas zod writes for declared payloads. The RJSF
// adapter over the same checks runs in the browser suite (run-page.browser.e2e-spec.ts): @rjsf/utils
// loads an ES module jest's CommonJS run cannot.

describe('payload forms from a JSON Schema', () => {
  const approval = toJSONSchema(
    z.object({
      approved: z.boolean(),
      by: z.string().min(1),
      amount: z.number().int().min(1).optional(),
      level: z.enum(['low', 'high']),
      email: z.email(),
      tags: z.array(z.string()).min(2),
      retries: z.number().int().min(3).default(3),
      nested: z.object({ at: z.iso.datetime(), ratio: z.number().gt(0) }),
      maybe: z.string().nullable(),
    }),
  ) as Record<string, unknown>;

  it('opens on a template that passes the schema: required fields filled by type, defaults kept, optional ones left out', () => {
    const template = templateFor(approval) as Record<string, unknown>;
    expect(template).toMatchObject({
      approved: false,
      by: 'x',
      level: 'low',
      email: 'user@example.com',
      tags: ['', ''],
      retries: 3,
      nested: { ratio: 1 },
      maybe: '',
    });
    expect(template).not.toHaveProperty('amount');
    expect(validateAgainstSchema(template, approval)).toEqual([]);
  });

  it('says what is wrong, at its path, in words', () => {
    const value = { ...(templateFor(approval) as object), by: '', amount: 0, level: 'mid', extra: 1, tags: [1, 'b'] } as Record<
      string,
      unknown
    >;
    delete value.approved;
    expect(validateAgainstSchema(value, approval)).toEqual(
      expect.arrayContaining([
        { path: 'approved', message: 'is required' },
        { path: 'by', message: 'must have at least 1 character' },
        { path: 'amount', message: 'must be ≥ 1' },
        { path: 'level', message: 'must be one of "low", "high"' },
        { path: 'tags[0]', message: 'expected string, got integer' },
        { path: 'extra', message: 'is not allowed here' },
      ]),
    );
    expect(validateAgainstSchema({ ...(templateFor(approval) as object), email: 'nope' }, approval)).toEqual([
      { path: 'email', message: 'must be a valid email' },
    ]);
  });

  it('builds a form only from a schema that says what shape the payload has', () => {
    expect(formable(approval)).toBe(true);
    expect(formable({})).toBe(false);
    expect(formable(undefined)).toBe(false);
  });
});
