import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

describe("the docs' examples", () => {
  it('are the code the tests run (run `node scripts/doc-snippets.mjs` after changing it)', () => {
    const root = join(__dirname, '..', '..');
    expect(() =>
      execFileSync(process.execPath, [join(root, 'scripts/doc-snippets.mjs'), '--check'], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });
});
