/**
 * WCAG 2.x contrast of text against what is behind it, from a browser's computed colours:
 * a colour with alpha is composited over the one beneath it before its luminance is taken.
 */

/** An sRGB colour, channels 0–255, alpha 0–1. */
export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** Text as the page shows it: its colour and the background colours from it up to the root. */
export interface ShownText {
  tag: string;
  className: string;
  text: string;
  color: string;
  backgrounds: string[];
  fontSize: number;
  fontWeight: number;
}

/** The canvas under a page whose root has no background. */
const CANVAS: Rgba = { r: 255, g: 255, b: 255, a: 1 };

/** A computed colour, `rgb(…)` or `rgba(…)` as Chromium gives it. */
export function parseColour(css: string): Rgba {
  const found = /^rgba?\(([\d.]+),\s*([\d.]+),\s*([\d.]+)(?:,\s*([\d.]+))?\)$/.exec(css.trim());
  if (!found) throw new Error(`not a computed colour: ${css}`);
  const [, r, g, b, a] = found;
  return { r: Number(r), g: Number(g), b: Number(b), a: a === undefined ? 1 : Number(a) };
}

function over(top: Rgba, under: Rgba): Rgba {
  const mix = (t: number, u: number) => t * top.a + u * (1 - top.a);
  return { r: mix(top.r, under.r), g: mix(top.g, under.g), b: mix(top.b, under.b), a: 1 };
}

/** The opaque colour behind an element: its own and its ancestors' backgrounds, stacked. */
export function effectiveBackground(backgrounds: string[]): Rgba {
  const layers: Rgba[] = [];
  for (const css of backgrounds) {
    const layer = parseColour(css);
    if (layer.a === 0) continue;
    layers.push(layer);
    if (layer.a === 1) break;
  }
  return layers.reduceRight((under, layer) => over(layer, under), CANVAS);
}

function luminance({ r, g, b }: Rgba): number {
  const linear = (channel: number) => {
    const c = channel / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}

/** The contrast ratio of two opaque colours, 1 to 21. */
export function contrastRatio(one: Rgba, other: Rgba): number {
  const [light, dark] = [luminance(one), luminance(other)].sort((x, y) => y - x) as [
    number,
    number,
  ];
  return (light + 0.05) / (dark + 0.05);
}

/** Large text (24px, or 18.66px bold) needs 3:1; other text 4.5:1. */
export function neededRatio(text: ShownText): number {
  const large = text.fontSize >= 24 || (text.fontSize >= 18.66 && text.fontWeight >= 700);
  return large ? 3 : 4.5;
}

/** Each text whose contrast is below what it needs, in words naming it and its colours. */
export function contrastFailures(texts: ShownText[]): string[] {
  return texts.flatMap((text) => {
    const background = effectiveBackground(text.backgrounds);
    const colour = over(parseColour(text.color), background);
    const ratio = contrastRatio(colour, background);
    const needed = neededRatio(text);
    if (ratio >= needed) return [];
    const css = ({ r, g, b }: Rgba) => `rgb(${[r, g, b].map(Math.round).join(', ')})`;
    const name = `<${text.tag}${text.className ? ` class="${text.className}"` : ''}>`;
    return [
      `${name} "${text.text.replace(/\s+/g, ' ').slice(0, 40)}": ${text.color} on ${css(background)} is ${ratio.toFixed(2)}:1, needs ${needed}:1`,
    ];
  });
}
