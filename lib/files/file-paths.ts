/**
 * Workspace-relative paths, as files and automations record them: `agents/dev/notes/plan.md`. A path
 * names a place inside an agent's (or the organization's) workspace and never outside it, and each
 * place has one spelling, since a file's path is its key (two spellings of one place would be two
 * files). So a path is refused when it:
 *
 * - is absolute: begins with `/` or `\`, a drive (`C:`) or `~`;
 * - has a `..` segment (it could climb out), a `.` segment or an empty one (`a//b`, a trailing `/`);
 * - uses `\` as a separator (`/` is the one separator);
 * - holds control characters;
 * - is longer than `MAX_PATH_BYTES` as UTF-8 (it is part of a sort key, which DynamoDB caps at 1,024 bytes).
 */
export const MAX_PATH_BYTES = 512;

/** Why `path` is not a workspace-relative path, or undefined when it is one. */
export function pathProblem(path: string): string | undefined {
  if (path.length === 0) return 'must not be empty';
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) return `must be at most ${MAX_PATH_BYTES} bytes as UTF-8`;
  if (/\p{Cc}/u.test(path)) return 'must not contain control characters';
  if (/^[/\\~]/.test(path) || /^[A-Za-z]:/.test(path)) return 'must be relative to the workspace, not absolute';
  if (path.includes('\\')) return 'must separate its segments with `/`, not `\\`';
  const segments = path.split('/');
  if (segments.includes('..')) return 'must not contain a `..` segment';
  if (segments.includes('.')) return 'must not contain a `.` segment';
  if (segments.includes('')) return 'must not contain an empty segment (`//` or a trailing `/`)';
  return undefined;
}

/**
 * The extension of a path's last segment, lowercase and without its dot, or null when it has none. A
 * leading dot names a hidden file, not an extension (`.env` has none, as Node's `extname` says).
 *
 * @example
 * extensionOf('docs/Plan.MD') // 'md'
 * extensionOf('Makefile') // null
 */
export function extensionOf(path: string): string | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0 || dot === name.length - 1) return null;
  return name.slice(dot + 1).toLowerCase();
}
