import * as z from 'zod';
import { MAX_PATH_BYTES, pathProblem } from '#lib/files/file-paths';

/** Workspace-relative paths in requests (files, automations): the rules of lib/files/file-paths.ts. */

export const PATH_RULES =
  'A workspace-relative path: segments separated by `/`, none empty, `.` or `..`; no leading `/`, `\\`, `~` ' +
  `or drive letter; no backslash or control characters; at most ${MAX_PATH_BYTES} bytes as UTF-8. ` +
  'Anything else is 400.';

/** A workspace-relative path (`agents/dev/notes.md`); a path outside the rules is a 400 naming the rule. */
export const workspaceRelativePath = z
  .string()
  .max(MAX_PATH_BYTES)
  .superRefine((path, issues) => {
    const problem = pathProblem(path);
    if (problem) issues.addIssue({ code: 'custom', message: problem });
  })
  .meta({ description: PATH_RULES });
