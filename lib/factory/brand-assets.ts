import { PermanentJobError } from '#lib/factory/handler-types';

/**
 * The brand-assets job: queued when a product's colours change (PATCH /products/{slug}) and when a push
 * changes logo images (the git webhook). For colours it derives what a product's pages and images use
 * beside each colour: a lighter and a darker variant and the text colour (black or white) that reads on
 * it, with its WCAG contrast ratio. For logos it lists the files by format, as a renderer would take them.
 */

type Rgb = [number, number, number];

const HEX = /^#([0-9a-f]{6})$/i;

const toRgb = (hex: string): Rgb => {
  const digits = (HEX.exec(hex)?.[1] ?? '000000').toLowerCase();
  return [0, 2, 4].map((at) => Number.parseInt(digits.slice(at, at + 2), 16)) as Rgb;
};

const toHex = (rgb: Rgb): string =>
  `#${rgb
    .map((channel) =>
      Math.round(Math.min(255, Math.max(0, channel)))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;

/** Mixed with white (`by` > 0) or black (`by` < 0). */
const mix = (rgb: Rgb, by: number): Rgb =>
  rgb.map((channel) => (by >= 0 ? channel + (255 - channel) * by : channel * (1 + by))) as Rgb;

/** WCAG 2 relative luminance. */
function luminance(rgb: Rgb): number {
  const [r, g, b] = rgb.map((channel) => {
    const value = channel / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  }) as Rgb;
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const contrast = (a: number, b: number): number => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

export interface Swatch {
  base: string;
  light: string;
  dark: string;
  /** Black or white, whichever reads better on `base`. */
  text: string;
  contrast_ratio: number;
}

export function swatch(hex: string): Swatch {
  const rgb = toRgb(hex);
  const own = luminance(rgb);
  const onBlack = contrast(own, 0);
  const onWhite = contrast(own, 1);
  return {
    base: toHex(rgb),
    light: toHex(mix(rgb, 0.4)),
    dark: toHex(mix(rgb, -0.3)),
    text: onBlack >= onWhite ? '#000000' : '#ffffff',
    contrast_ratio: Math.round(Math.max(onBlack, onWhite) * 100) / 100,
  };
}

const colorOf = (value: unknown): string | null => (typeof value === 'string' && HEX.test(value) ? value : null);

export function brandAssets(payload: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(payload.files)) {
    const files = payload.files.filter((file): file is string => typeof file === 'string');
    const byFormat: Record<string, string[]> = {};
    for (const file of files) {
      const format = file.includes('.') ? (file.split('.').pop() ?? '').toLowerCase() : 'unknown';
      byFormat[format] = [...(byFormat[format] ?? []), file];
    }
    return {
      kind: 'logos',
      repository: payload.repository ?? null,
      commit_sha: payload.commit_sha ?? null,
      files_by_format: byFormat,
      file_count: typeof payload.file_count === 'number' ? payload.file_count : files.length,
    };
  }
  if ('brand_color' in payload || 'accent_color' in payload) {
    const brand = colorOf(payload.brand_color);
    const accent = colorOf(payload.accent_color);
    return {
      kind: 'palette',
      product_slug: payload.product_slug ?? null,
      brand: brand ? swatch(brand) : null,
      accent: accent ? swatch(accent) : null,
    };
  }
  throw new PermanentJobError('A brand-assets job needs brand_color and accent_color, or files, in its payload');
}
