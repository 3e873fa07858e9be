import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** The README's "How it is built" section and the tree say the same thing. */
const readme = readFileSync('README.md', 'utf8');
const section = readme.slice(readme.indexOf('## How it is built'), readme.indexOf('## Configuration'));

const folders = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${dir}/${entry.name}`);

describe('the README’s architecture section', () => {
  it('names every folder of lib and functions', () => {
    const missing = [...folders('lib'), ...folders('functions'), ...folders('lib/webhooks')].filter(
      (folder) => !new RegExp(`\`${folder}[\`/]`).test(section),
    );
    expect(missing).toEqual([]);
  });

  it('names no folder that does not exist', () => {
    const named = [...section.matchAll(/`((?:lib|functions|infra)\/[\w/-]+?)\/?`/g)].map((match) => match[1] as string);
    expect(named.filter((path) => !existsSync(path) && !existsSync(`${path}.ts`))).toEqual([]);
  });
});

describe('the README’s first session', () => {
  const run = readme.slice(readme.indexOf('## Run it'), readme.indexOf('## Test it'));

  it('opens the docs in any browser, not with a macOS-only command', () => {
    expect(run).not.toMatch(/^open /m);
    expect(run).toContain('/api/docs` in a browser');
  });

  it('shows an API key as a bearer, switching organization, refresh and logout, and an encoded key', () => {
    expect(run).toMatch(/authorization: Bearer \$KEY/);
    expect(run).toContain('osk_live_');
    expect(run).toMatch(/x-organization-id: \$OTHER/);
    expect(run).toContain('$B/auth/refresh');
    expect(run).toContain('$B/auth/logout');
    expect(run).toContain('credentials/github%2Fdeploy-token');
  });
});
