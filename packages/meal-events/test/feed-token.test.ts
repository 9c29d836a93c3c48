import { expect } from 'chai';
import { FeedTokenSealer } from '../src/feed-token.js';

const A = '8c9c5a4e-7a54-4a8e-9a43-1f3c8d7e6b5a';
const B = '0f0e0d0c-0b0a-4908-8706-050403020100';
const TOKEN = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ';

describe('FeedTokenSealer', () => {
  it('opens what it sealed, again from what it remembers, and never under another household or another secret', () => {
    const sealer = new FeedTokenSealer('secret one');
    const sealed = sealer.seal(A, TOKEN, Buffer.alloc(12, 7));
    expect(sealer.open(A, sealed)).to.equal(TOKEN);
    expect(sealer.open(A.toUpperCase(), Buffer.from(sealed)), 'remembered, any letter case').to.equal(TOKEN);
    // Remembering A's token does not open it for B (the household is associated data and part of the key).
    expect(sealer.open(B, sealed)).to.equal(undefined);
    expect(new FeedTokenSealer('secret two').open(A, sealed)).to.equal(undefined);
    const tampered = Buffer.from(sealed);
    tampered[tampered.length - 1]! ^= 1;
    expect(sealer.open(A, tampered)).to.equal(undefined);
    expect(sealer.open(A, sealed.subarray(0, 20))).to.equal(undefined);
    // A new token for the same household (a fresh IV) opens to the new token, not the remembered one.
    const next = sealer.seal(A, TOKEN.replace('a', 'z'), Buffer.alloc(12, 8));
    expect(sealer.open(A, next)).to.equal(TOKEN.replace('a', 'z'));
    expect(sealer.open(A, sealed)).to.equal(TOKEN);
  });
});
