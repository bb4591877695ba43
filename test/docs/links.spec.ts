import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

describe("the docs' links to the tests that prove each rule", () => {
  it('point at the test they name (run `node scripts/doc-links.mjs` after moving tests)', () => {
    const root = join(__dirname, '..', '..');
    expect(() =>
      execFileSync(process.execPath, [join(root, 'scripts/doc-links.mjs'), '--check'], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });
});
