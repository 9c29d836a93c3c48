import { expect } from 'chai';
import { canonicalJson, checkIfMatch, etagOf, etagOfJsonText } from '../src/etag.js';
import { PreconditionFailedError } from '../src/index.js';

describe('ETag', () => {
  const value = { id: 'a', when: new Date('2026-11-22T09:00:00.000Z'), list: [{ b: 1, a: null }], nested: { z: true, y: 'ü' } };

  it('is the same for equal JSON whoever wrote it (member order, whitespace, a Date as its ISO text)', () => {
    const text = '{ "nested": {"y":"ü", "z": true}, "list": [{"a": null, "b": 1}], "when": "2026-11-22T09:00:00.000Z", "id": "a" }';
    expect(etagOfJsonText(text)).to.equal(etagOf(value));
    expect(etagOfJsonText(Buffer.from(text, 'utf8'))).to.equal(etagOf(value));
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: 0 }] })).to.equal('{"a":[2,{"c":0,"d":1}],"b":1}');
  });

  it('keeps the tags stored before the library took over (the same text, byte for byte)', () => {
    // Code-unit member order (the 😀 key sorts before ｆ), a lone surrogate kept escaped, numbers as JSON writes them.
    expect(canonicalJson(JSON.parse('{"ｆ":1,"😀":[1e21,-0.5,null],"b":"\\ud800","a":{"y":true,"x":""}}'))).to.equal(
      '{"a":{"x":"","y":true},"b":"\\ud800","😀":[1e+21,-0.5,null],"ｆ":1}',
    );
    expect(etagOf({ id: 'a', n: 1 })).to.equal('"693KzhXFasmselSZ__uk3s4zck1"');
  });

  it('changes with any member, and is a strong quoted tag', () => {
    expect(etagOf({ ...value, id: 'b' })).to.not.equal(etagOf(value));
    expect(etagOf(value)).to.match(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOfJsonText('not json')).to.equal(undefined);
  });

  it('If-Match: * and any listed current tag pass; a stale or weak one answers 412 precondition_failed', () => {
    const tag = etagOf(value);
    checkIfMatch('*', value);
    checkIfMatch(tag, value);
    checkIfMatch(`"other", ${tag}`, value);
    for (const header of ['"stale"', `W/${tag}`]) {
      expect(() => checkIfMatch(header, value))
        .to.throw(PreconditionFailedError)
        .with.property('code', 'precondition_failed');
    }
  });
});
