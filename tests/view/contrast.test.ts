import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  contrastFailures,
  contrastRatio,
  effectiveBackground,
  parseColour,
  type ShownText,
} from './contrast.ts';

const text = (
  color: string,
  backgrounds: string[],
  fontSize = 16,
  fontWeight = 400,
): ShownText => ({
  tag: 'p',
  className: 'lede',
  text: 'Surveyed\n  at noon',
  color,
  backgrounds,
  fontSize,
  fontWeight,
});

describe('contrast of text against its background', () => {
  it('gives black on white 21:1 and grey #777 on white just under 4.5:1', () => {
    const white = parseColour('rgb(255, 255, 255)');
    assert.equal(contrastRatio(parseColour('rgb(0, 0, 0)'), white), 21);
    assert.equal(contrastRatio(parseColour('rgb(119, 119, 119)'), white).toFixed(2), '4.48');
  });

  it('composites a translucent background over the first opaque one beneath it', () => {
    const behind = effectiveBackground([
      'rgba(0, 0, 0, 0)',
      'rgba(0, 0, 0, 0.5)',
      'rgb(255, 255, 255)',
      'rgb(0, 0, 255)',
    ]);
    assert.deepEqual(behind, { r: 127.5, g: 127.5, b: 127.5, a: 1 });
  });

  it('composites translucent text over its background', () => {
    assert.deepEqual(contrastFailures([text('rgba(0, 0, 0, 0.1)', ['rgb(255, 255, 255)'])]), [
      '<p class="lede"> "Surveyed at noon": rgba(0, 0, 0, 0.1) on rgb(255, 255, 255) is 1.25:1, needs 4.5:1',
    ]);
  });

  it('asks 3:1 of large text: 24px, or 18.66px bold', () => {
    const grey = 'rgb(150, 150, 150)'; // 2.96:1 on white
    const dimGrey = 'rgb(130, 130, 130)'; // 3.84:1 on white
    assert.equal(contrastFailures([text(grey, ['rgb(255, 255, 255)'], 24)]).length, 1);
    assert.equal(contrastFailures([text(dimGrey, ['rgb(255, 255, 255)'], 24)]).length, 0);
    assert.equal(contrastFailures([text(dimGrey, ['rgb(255, 255, 255)'], 18.66, 700)]).length, 0);
    assert.equal(contrastFailures([text(dimGrey, ['rgb(255, 255, 255)'], 18.66, 600)]).length, 1);
    assert.equal(contrastFailures([text(dimGrey, ['rgb(255, 255, 255)'], 23)]).length, 1);
  });
});
