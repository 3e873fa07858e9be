import { describe, expect, it } from 'vitest';
import { brandAssets, swatch } from '#lib/factory/brand-assets';
import { PermanentJobError } from '#lib/factory/handler-types';

describe('swatch', () => {
  it('derives a lighter and a darker colour and the text colour that reads best, with its WCAG contrast', () => {
    expect(swatch('#336699')).toEqual({
      base: '#336699',
      light: '#85a3c2',
      dark: '#24476b',
      text: '#ffffff',
      contrast_ratio: 6,
    });
    expect(swatch('#FFFF00')).toMatchObject({ base: '#ffff00', text: '#000000', contrast_ratio: 19.56 });
  });
});

describe('brandAssets', () => {
  it('answers the palette of a product’s colours, null for a colour cleared', () => {
    expect(brandAssets({ product_slug: 'lamp', brand_color: '#000000', accent_color: null })).toEqual({
      kind: 'palette',
      product_slug: 'lamp',
      brand: { base: '#000000', light: '#666666', dark: '#000000', text: '#ffffff', contrast_ratio: 21 },
      accent: null,
    });
  });

  it('lists a push’s logo files by format', () => {
    expect(
      brandAssets({
        repository: 'acme/site',
        commit_sha: 'abc',
        files: ['a/logo.SVG', 'b/logo.png', 'c/x.png'],
        file_count: 5,
      }),
    ).toEqual({
      kind: 'logos',
      repository: 'acme/site',
      commit_sha: 'abc',
      files_by_format: { svg: ['a/logo.SVG'], png: ['b/logo.png', 'c/x.png'] },
      file_count: 5,
    });
  });

  it('fails for good when the payload holds neither colours nor files', () => {
    expect(() => brandAssets({ something: 'else' })).toThrow(PermanentJobError);
  });
});
