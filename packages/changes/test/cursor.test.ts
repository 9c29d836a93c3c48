import { randomUUID } from 'node:crypto';
import { HttpError } from '@svc/http-kit';
import { expect } from 'chai';
import { ChangesCursor } from '../src/cursor.js';

const codeOf = (work: () => unknown): [number, string] => {
  try {
    work();
  } catch (err) {
    if (err instanceof HttpError) return [err.status, err.code];
    throw err;
  }
  return [200, 'held'];
};

describe('changes cursors', () => {
  const cursors = new ChangesCursor('a secret of the test, long enough');
  const x = randomUUID();
  const y = randomUUID();

  it('holds on the household it was made for (any letter case of its id), with the position readable', () => {
    const c = cursors.encode(x, '42');
    expect(c).to.match(/^42\.[A-Za-z0-9_-]{22}$/);
    expect(cursors.decode(x, c)).to.equal('42');
    expect(cursors.decode(x.toUpperCase(), c)).to.equal('42');
  });

  it('refuses another household’s cursor, an altered, a made-up or a malformed one: 400 invalid_cursor', () => {
    const c = cursors.encode(x, '42');
    const mac = c.split('.')[1]!;
    for (const bad of [
      cursors.encode(y, '42'),
      `43.${mac}`,
      `42.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      `042.${mac}`,
      `42.${mac}.`,
      '42.',
      '.x',
      'not-a-cursor-!',
      '',
    ])
      expect(
        codeOf(() => cursors.decode(x, bad)),
        bad,
      ).to.deep.equal([400, 'invalid_cursor']);
    expect(
      codeOf(() => new ChangesCursor('another secret').decode(x, c)),
      'another secret',
    ).to.deep.equal([400, 'invalid_cursor']);
  });

  it('answers a bare position (the unsigned cursors of before) 410 cursor_expired', () => {
    for (const old of ['0', '7', '123456789012345678']) expect(codeOf(() => cursors.decode(x, old))).to.deep.equal([410, 'cursor_expired']);
  });
});
