import { describe, expect, it } from 'vitest';
import { changedLogoFiles, looksLikeLogo } from '#lib/webhooks/inbound/git-push';
import { GitPushPayload } from '#lib/webhooks/inbound/payloads';
import { loadEvent } from '#tests/support/events';

describe('looksLikeLogo', () => {
  it.each([
    ['assets/logo.svg', true],
    ['public/brand/Logo-Dark.PNG', true],
    ['brand/logos/mark.webp', true],
    ['src/logo.tsx', false],
    ['docs/logo-guidelines.md', false],
    ['public/hero.png', false],
  ])('%s: %s', (path, expected) => {
    expect(looksLikeLogo(path)).toBe(expected);
  });
});

describe('changedLogoFiles', () => {
  it('lists logo images added or modified by the push, not removed ones', () => {
    const push = GitPushPayload.parse(loadEvent('webhooks/git-push-logo'));
    expect(changedLogoFiles(push)).toEqual(['assets/logo.svg', 'public/brand/logo-dark.png']);
  });

  it('lists nothing for a push without logo images', () => {
    const push = GitPushPayload.parse(loadEvent('webhooks/git-push'));
    expect(changedLogoFiles(push)).toEqual([]);
  });
});
