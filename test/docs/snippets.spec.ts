import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const snippets = (check: string) =>
  execFileSync(process.execPath, [join(root, 'scripts/doc-snippets.mjs'), `--check=${check}`], { cwd: root, stdio: 'pipe' });

describe("the docs' TypeScript", () => {
  it('a block after `<!-- include: path -->` is that file as the tests run it (run `node scripts/doc-snippets.mjs` after changing it)', () => {
    expect(() => snippets('includes')).not.toThrow();
  });

  it('every TypeScript block in README.md and docs/ type-checks against the library; a fragment that cannot says why in a marker', () => {
    expect(() => snippets('types')).not.toThrow();
  });
});
