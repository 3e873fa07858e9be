import { describe, expect, it } from 'vitest';
import { extensionOf, MAX_PATH_BYTES, pathProblem } from '#lib/files/file-paths';

describe('pathProblem', () => {
  it.each(['notes.md', 'agents/dev/notes/plan.md', 'a b/c#d.txt', '.env', 'docs/v1.2/readme', 'é/ü.md'])(
    'accepts the workspace-relative path %j',
    (path) => {
      expect(pathProblem(path)).toBeUndefined();
    },
  );

  it.each([
    ['', 'must not be empty'],
    ['/etc/passwd', 'absolute'],
    ['\\server\\share', 'absolute'],
    ['C:/Windows/system.ini', 'absolute'],
    ['c:notes.txt', 'absolute'],
    ['~/notes.md', 'absolute'],
    ['agents/../../etc/passwd', '`..`'],
    ['..', '`..`'],
    ['agents/..', '`..`'],
    ['./notes.md', '`.` segment'],
    ['agents//notes.md', 'empty segment'],
    ['agents/', 'empty segment'],
    ['agents\\notes.md', '`/`, not `\\`'],
    ['notes\u0000.md', 'control characters'],
    ['line\nbreak', 'control characters'],
    ['x'.repeat(MAX_PATH_BYTES + 1), `${MAX_PATH_BYTES} bytes`],
    ['é'.repeat(MAX_PATH_BYTES / 2 + 1), `${MAX_PATH_BYTES} bytes`],
  ])('refuses %j', (path, problem) => {
    expect(pathProblem(path)).toContain(problem);
  });
});

describe('extensionOf', () => {
  it.each([
    ['docs/Plan.MD', 'md'],
    ['archive.tar.gz', 'gz'],
    ['v1.2/readme', null],
    ['Makefile', null],
    ['.env', null],
    ['trailing.', null],
  ])('gives %j the extension %j', (path, ext) => {
    expect(extensionOf(path)).toBe(ext);
  });
});
