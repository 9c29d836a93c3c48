import { expect } from 'chai';
import request from 'supertest';
import { MEAL_CATEGORIES, PRICE_CLASSES, STARTER_LIBRARY } from '../src/index.js';
import { starterLanguageOf } from '../src/service.js';
import { STARTER_ENTRIES } from '../src/starter/index.js';
import { type Harness, startHarness } from './helpers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ONE_LINE = /^[^\p{Cc}\p{Cf}]+$/u;

describe('the starter library', () => {
  describe('its data', () => {
    it('has at least 120 dishes, each with one fixed v4 uuid of its own', () => {
      expect(STARTER_ENTRIES.length).to.be.at.least(120);
      for (const e of STARTER_ENTRIES) expect(e.id, e.en.name).to.match(UUID);
      expect(new Set(STARTER_ENTRIES.map((e) => e.id)).size).to.equal(STARTER_ENTRIES.length);
    });

    it('has at least 6 dishes in every category, Leftovers too, in each language', () => {
      for (const language of ['en', 'nb'] as const) {
        for (const category of MEAL_CATEGORIES) {
          expect(STARTER_LIBRARY[language].items.filter((d) => d.category === category).length, `${language} ${category}`).to.be.at.least(6);
        }
      }
    });

    it('keeps names and tags within the contract: 1–100 characters on one line, at most 20 tags of 1–40, names unique in a language', () => {
      for (const language of ['en', 'nb'] as const) {
        const items = STARTER_LIBRARY[language].items;
        expect(items.length).to.be.at.least(120);
        expect(new Set(items.map((d) => d.name.toLowerCase())).size, `${language} names unique`).to.equal(items.length);
        for (const d of items) {
          expect(d.name.length, d.name).to.be.within(1, 100);
          expect(d.name, d.name).to.match(ONE_LINE);
          expect(d.name.trim(), d.name).to.equal(d.name);
          expect(d.tags.length, d.name).to.be.within(1, 20);
          for (const t of d.tags) {
            expect(t.length, `${d.name}: ${t}`).to.be.within(1, 40);
            expect(t).to.match(ONE_LINE);
          }
          expect(new Set(d.tags).size, d.name).to.equal(d.tags.length);
        }
      }
    });

    it('has realistic weeknight numbers: 5–60 active minutes, every price class used, most dishes not Expensive', () => {
      for (const e of STARTER_ENTRIES) {
        expect(Number.isInteger(e.activeMinutes), e.en.name).to.equal(true);
        expect(e.activeMinutes, e.en.name).to.be.within(5, 60);
        expect(PRICE_CLASSES).to.include(e.priceClass);
      }
      for (const p of PRICE_CLASSES)
        expect(
          STARTER_ENTRIES.some((e) => e.priceClass === p),
          p,
        ).to.equal(true);
      expect(STARTER_ENTRIES.filter((e) => e.priceClass === 'Expensive').length).to.be.below(STARTER_ENTRIES.length / 10);
      expect(STARTER_ENTRIES.filter((e) => e.category === 'Leftovers').every((e) => e.priceClass === 'Cheap' && e.activeMinutes <= 25)).to.equal(true);
    });

    it('gives a dish the same id, category, minutes and price class in both languages, its name and tags translated', () => {
      const en = new Map(STARTER_LIBRARY.en.items.map((d) => [d.id, d]));
      const nb = new Map(STARTER_LIBRARY.nb.items.map((d) => [d.id, d]));
      expect([...en.keys()].sort()).to.deep.equal([...nb.keys()].sort());
      let sameName = 0;
      for (const [id, e] of en) {
        const n = nb.get(id)!;
        expect({ category: n.category, activeMinutes: n.activeMinutes, priceClass: n.priceClass }, e.name).to.deep.equal({
          category: e.category,
          activeMinutes: e.activeMinutes,
          priceClass: e.priceClass,
        });
        expect(n.tags.length, e.name).to.equal(e.tags.length);
        if (n.name === e.name) sameName++;
      }
      // A few names are the same in both (Lasagne, Minestrone, Croque monsieur); nearly all are translated.
      expect(sameName).to.be.below(10);
      const names = new Set(STARTER_LIBRARY.nb.items.map((d) => d.name));
      for (const n of [
        'Fiskekaker med potet og gulrot',
        'Kjøttkaker i brun saus med ertestuing',
        'Taco fredag',
        'Fiskesuppe',
        'Stekt ris med gårsdagens grønnsaker',
      ])
        expect(names, n).to.include(n);
    });

    it('is made once: the planner gets the same frozen objects every time, by id, origin starter, never madeAgain', () => {
      for (const language of ['en', 'nb'] as const) {
        const lib = STARTER_LIBRARY[language];
        expect(lib.plannable).to.equal(STARTER_LIBRARY[language].plannable);
        expect(Object.isFrozen(lib.plannable)).to.equal(true);
        const ids = lib.plannable.map((d) => d.id);
        expect(ids).to.deep.equal([...ids].sort());
        expect(lib.plannable.every((d) => d.origin === 'starter' && d.madeAgain === false)).to.equal(true);
        expect(JSON.parse(lib.json)).to.deep.equal({ items: lib.items });
      }
    });
  });

  describe('its language', () => {
    const cases: [string | undefined, 'en' | 'nb'][] = [
      [undefined, 'en'],
      ['', 'en'],
      ['nb', 'nb'],
      ['nb-NO', 'nb'],
      ['nn', 'nb'],
      ['no', 'nb'],
      ['nn-NO,en;q=0.8', 'nb'],
      ['en-GB,nb;q=0.5', 'en'],
      ['de-DE', 'en'],
      ['de, nb;q=0.2', 'nb'],
      ['*', 'en'],
      ['garbage;;q=', 'en'],
    ];
    for (const [header, language] of cases) {
      it(`Accept-Language ${JSON.stringify(header)} reads ${language}`, () => {
        expect(starterLanguageOf(header)).to.equal(language);
      });
    }
  });

  describe('GET /api/v1/starter-dishes', () => {
    let h: Harness;
    const user = '8d3c8f8e-6a1e-4d7a-9f3b-1c2d3e4f5a6b';
    before(async () => {
      h = await startHarness();
    });
    after(async () => {
      await h.db.destroy();
    });

    it('answers the library in the language asked for, whatever Accept-Language says', async () => {
      const nb = await request(h.app).get('/api/v1/starter-dishes?language=nb').set('X-Test-User', user).set('Accept-Language', 'en');
      expect(nb.status).to.equal(200);
      expect(nb.body.items).to.deep.equal(STARTER_LIBRARY.nb.items);
      expect(Object.keys(nb.body.items[0])).to.deep.equal(['id', 'name', 'category', 'activeMinutes', 'priceClass', 'tags']);
      const en = await request(h.app).get('/api/v1/starter-dishes?language=en').set('X-Test-User', user).set('Accept-Language', 'nb');
      expect(en.body.items).to.deep.equal(STARTER_LIBRARY.en.items);
    });

    it('reads the language from Accept-Language when left out, else English', async () => {
      const nb = await request(h.app).get('/api/v1/starter-dishes').set('X-Test-User', user).set('Accept-Language', 'nn-NO, en;q=0.7');
      expect(nb.body.items[0].id).to.equal(STARTER_LIBRARY.nb.items[0]!.id);
      expect(nb.body.items.map((d: { name: string }) => d.name)).to.include('Taco fredag');
      expect(nb.headers.vary).to.match(/Accept-Language/i);
      const en = await request(h.app).get('/api/v1/starter-dishes').set('X-Test-User', user);
      expect(en.body.items.map((d: { name: string }) => d.name)).to.include("Fried rice with yesterday's vegetables");
    });

    it('answers 400 validation_failed to an unknown language, 401 to no one', async () => {
      for (const language of ['de', 'NB', 'nn', '']) {
        const res = await request(h.app).get('/api/v1/starter-dishes').query({ language }).set('X-Test-User', user);
        expect(res.status, language).to.equal(400);
        expect(res.body.code).to.equal('validation_failed');
      }
      expect((await request(h.app).get('/api/v1/starter-dishes')).status).to.equal(401);
    });
  });
});
