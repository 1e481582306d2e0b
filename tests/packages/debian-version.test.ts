import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareVersions } from '../../src/packages/debian-version.ts';

describe("Debian's order of versions", () => {
  it('orders as dpkg --compare-versions does', () => {
    const ordered: [string, string][] = [
      ['1.0', '1.0-1'],
      ['1.0~rc1', '1.0'],
      ['1.2~~', '1.2~'],
      ['2.0', '1:0.9'],
      ['2.10-2', '2.10-3'],
      ['1.22.1-9', '1.22.1-9+deb12u1'],
      ['5:7.0.11-1~deb12u1', '5:7.0.15-1~deb12u1'],
      ['1.0a', '1.0+'],
      ['1.0', '1.0.0'],
      ['3.0', '10.0'],
      ['0.1-a', '0.1-b'],
    ];
    for (const [lower, higher] of ordered) {
      assert.ok(compareVersions(lower, higher) < 0, `${lower} < ${higher}`);
      assert.ok(compareVersions(higher, lower) > 0, `${higher} > ${lower}`);
    }
    assert.equal(compareVersions('1:2.10-3', '1:2.10-3'), 0);
  });
});
