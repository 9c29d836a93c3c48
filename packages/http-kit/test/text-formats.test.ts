import { expect } from 'chai';
import { multiLine, singleLine, toSingleLine } from '../src/index.js';
import { isMultiLineText, isSingleLineText, PartValidator } from '../src/validation.js';

describe('text formats: single-line (names) and multi-line (notes)', () => {
  const body = new PartValidator(
    { type: 'object', properties: { name: { type: 'string', maxLength: 80, ...singleLine }, notes: { type: 'string', ...multiLine } } },
    'body',
    { name: 'account_name_length' },
  );

  it('single-line refuses every control character, the line and paragraph separators, bidi controls and lone surrogates', () => {
    for (const bad of [
      'a\nb',
      'a\rb',
      'a\tb',
      'a\u0000',
      'a\u007F',
      'a\u0085',
      'a\u2028',
      'a\u2029',
      '\u202Eevil',
      'a\u2066b',
      'a\u200Fb',
      'a\u061Cb',
      'a\uD800',
    ]) {
      expect(isSingleLineText(bad), JSON.stringify(bad)).to.equal(false);
    }
    for (const good of ['Ada Lovelace', 'Åse Ødegård', 'Familien 👨‍👩‍👧', 'می‌خواهم', 'soft\u00ADhyphen', '日本語'])
      expect(isSingleLineText(good), good).to.equal(true);
  });

  it('multi-line keeps line feed, carriage return and tab, and refuses the rest', () => {
    expect(isMultiLineText('line one\r\nline two\tand a tab')).to.equal(true);
    for (const bad of ['a\u0000', 'a\u0007', 'a\u001B[31m', 'a\u2028', '\u202Eevil']) expect(isMultiLineText(bad), JSON.stringify(bad)).to.equal(false);
  });

  it('a request naming such a character answers validation_failed naming the field, even where the field has a code of its own', () => {
    let thrown: { code?: string; fields?: { field: string }[] } | undefined;
    try {
      body.check({ name: 'Ada\r\nBcc: x', notes: 'fine\nnotes' });
    } catch (err) {
      thrown = err as typeof thrown;
    }
    expect(thrown?.code).to.equal('validation_failed');
    expect(thrown?.fields?.map((f) => f.field)).to.deep.equal(['name']);
    // The field's own code still answers what it was made for.
    expect(() => body.check({ name: 'x'.repeat(81) }))
      .to.throw()
      .with.property('code', 'account_name_length');
    expect(body.check({ name: 'Ada', notes: 'one\ntwo' })).to.deep.equal({ name: 'Ada', notes: 'one\ntwo' });
  });

  it('toSingleLine makes any text safe for one line', () => {
    expect(toSingleLine('Ada\r\nBcc: x\u202E')).to.equal('Ada  Bcc: x ');
  });
});
