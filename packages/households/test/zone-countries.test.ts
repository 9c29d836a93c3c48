import { expect } from 'chai';
import request from 'supertest';
import { countryOfTimeZone, normaliseCountry, TIME_ZONE_IDS, UNKNOWN_COUNTRY } from '../src/formats.js';
import { type Harness, harness } from './helpers.js';

/** Each zone's own country per tzdata's zone.tab; links like their zone; ZZ for zones of no country. */
const EXPECTED: [string, string][] = [
  ['Europe/London', 'GB'],
  ['Europe/Helsinki', 'FI'],
  ['Europe/Berlin', 'DE'],
  ['Europe/Paris', 'FR'],
  ['Europe/Zurich', 'CH'],
  ['Europe/Oslo', 'NO'],
  ['Europe/Stockholm', 'SE'],
  ['Europe/Copenhagen', 'DK'],
  ['Europe/Brussels', 'BE'],
  ['Europe/Amsterdam', 'NL'],
  ['Europe/Kyiv', 'UA'],
  ['Europe/Kiev', 'UA'],
  ['Atlantic/Reykjavik', 'IS'],
  ['Iceland', 'IS'],
  ['GB', 'GB'],
  ['Asia/Tokyo', 'JP'],
  ['Japan', 'JP'],
  ['Asia/Kolkata', 'IN'],
  ['Asia/Calcutta', 'IN'],
  ['Asia/Shanghai', 'CN'],
  ['Asia/Singapore', 'SG'],
  ['Asia/Dubai', 'AE'],
  ['Asia/Saigon', 'VN'],
  ['America/Phoenix', 'US'],
  ['America/New_York', 'US'],
  ['US/Eastern', 'US'],
  ['America/Sao_Paulo', 'BR'],
  ['America/Toronto', 'CA'],
  ['America/Mexico_City', 'MX'],
  ['America/Puerto_Rico', 'PR'],
  ['America/Godthab', 'GL'],
  ['Africa/Lagos', 'NG'],
  ['Africa/Abidjan', 'CI'],
  ['Africa/Nairobi', 'KE'],
  ['Africa/Johannesburg', 'ZA'],
  ['Australia/Sydney', 'AU'],
  ['Pacific/Auckland', 'NZ'],
  ['Pacific/Ponape', 'FM'],
  ['Antarctica/McMurdo', 'AQ'],
  ['UTC', 'ZZ'],
  ['Etc/UTC', 'ZZ'],
  ['GMT', 'ZZ'],
  ['Etc/GMT+5', 'ZZ'],
  ['Etc/GMT-14', 'ZZ'],
  ['CET', 'ZZ'],
  ['EST5EDT', 'ZZ'],
];

const NO_COUNTRY = /^(Etc\/.*|UTC|UCT|GMT|GMT[+-]?0|Greenwich|Universal|Zulu|Factory|CET|MET|EET|WET|EST|MST|HST|EST5EDT|CST6CDT|MST7MDT|PST8PDT)$/;

describe('households: the country of a new household (decisions.md §2)', () => {
  describe('countryOfTimeZone', () => {
    for (const [zone, country] of EXPECTED) {
      it(`gives ${zone} ${country}`, () => {
        expect(countryOfTimeZone(zone)).to.equal(country);
      });
    }

    it('gives every accepted zone of a place a country that PATCH accepts, and ZZ only to zones of no place', () => {
      const unplaced: string[] = [];
      for (const id of TIME_ZONE_IDS) {
        const country = countryOfTimeZone(id);
        if (NO_COUNTRY.test(id)) expect(country, id).to.equal(UNKNOWN_COUNTRY);
        else if (country === UNKNOWN_COUNTRY) unplaced.push(id);
        else expect(normaliseCountry(country), id).to.equal(country);
      }
      expect(unplaced).to.deep.equal([]);
    });
  });

  describe('POST /api/v1/households', () => {
    let h: Harness;
    before(async () => {
      h = await harness();
    });
    after(async () => {
      await h.db.destroy();
    });

    it('stores and answers the country of the time zone, for zones on every continent', async () => {
      const owner = h.accounts.user('Olga');
      const got: [string, string][] = [];
      for (const [zone] of EXPECTED) {
        expect(TIME_ZONE_IDS, zone).to.include(zone);
        const res = await request(h.app)
          .post('/api/v1/households')
          .set('X-Test-User', owner)
          .send({ name: zone, timeZoneId: zone, defaultDinnerTime: '18:00' });
        expect(res.status, zone).to.equal(201);
        const stored = await h.households.profiles(res.body.id);
        expect(stored.country, `${zone} stored`).to.equal(res.body.country);
        got.push([zone, stored.country]);
      }
      expect(got).to.deep.equal(EXPECTED);
    });

    it('derives the measurement system from that country: Phoenix is US, UsCustomary and Volume', async () => {
      const res = await request(h.app)
        .post('/api/v1/households')
        .set('X-Test-User', h.accounts.user('Pia'))
        .send({ name: 'Desert', timeZoneId: 'America/Phoenix', defaultDinnerTime: '18:00' });
      expect(res.status).to.equal(201);
      expect(res.body).to.deep.include({ country: 'US', measurementSystem: 'UsCustomary', dryGoodsMeasure: 'Volume' });
    });
  });
});
