import { expect } from 'chai';
import { noticeLanguage } from '../src/access-token-mails.js';

describe('the language of a notice (Accept-Language, read by negotiator)', () => {
  it('is Norwegian Bokmål when nb, no or nn is preferred over English, else English', () => {
    const cases: [string | undefined, 'en' | 'nb'][] = [
      [undefined, 'en'],
      ['nb-NO, en;q=0.5', 'nb'],
      ['nn', 'nb'],
      ['no;q=0.8, en;q=0.7', 'nb'],
      ['en, nb;q=0.9', 'en'],
      ['en-US,en;q=0.9,nb;q=0.8', 'en'],
      ['de, fr', 'en'],
      ['nb;q=0, en;q=0.1', 'en'],
      ['garbage;;q=x', 'en'],
    ];
    for (const [header, language] of cases) expect(noticeLanguage(header), String(header)).to.equal(language);
  });
});
