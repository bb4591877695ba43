import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

describe('docs/reference.md', () => {
  it("is what the code's doc comments generate today (run `node scripts/generate-reference.mjs` after changing them)", () => {
    const root = join(__dirname, '..', '..');
    expect(() =>
      execFileSync(process.execPath, [join(root, 'scripts/generate-reference.mjs'), '--check'], { cwd: root, stdio: 'pipe' }),
    ).not.toThrow();
  });
});
