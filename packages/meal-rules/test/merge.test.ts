import { expect } from 'chai';
import { mergeModelReading, mergeParses, sameSubject } from '../src/merge.js';
import { dishesNamed, type MealRulePayload, type ParsedRuleProposal, type ParseRulesResponse, parseRulesOffline } from '../src/parser/index.js';

function proposal(payload: MealRulePayload, summary = payload.kind): ParsedRuleProposal {
  const dated = 'specificDate' in payload && payload.specificDate !== null;
  const date = dated ? (payload as { specificDate: string }).specificDate : null;
  return { summary, request: { payload, strength: 'Hard', scope: dated ? 'SpecificDate' : 'Permanent', startDate: date, endDate: date } };
}

const fish = (min: number, max: number) => proposal({ kind: 'CategoryFrequency', category: 'Fish', minimumPerWeek: min, maximumPerWeek: max });
const onDay = (category: 'Taco' | 'Fish', weekday: 'Friday' | 'Monday' | null, specificDate: string | null = null) =>
  proposal({ kind: 'CategoryOnDay', category, weekday, specificDate });
const dinner = (time: string, weekdays: ('Monday' | 'Friday' | 'Saturday' | 'Sunday')[]) => proposal({ kind: 'DinnerTimeOnWeekday', time, weekdays });
const price = (weekdays: 'Monday'[]) => proposal({ kind: 'PriceClassOnDays', ceiling: 'Cheap', weekdays });
const cooking = (weekdays: 'Monday'[], specificDate: string | null) => proposal({ kind: 'MaximumActiveCookingTime', minutes: 30, weekdays, specificDate });

describe('merging the model’s reading with the offline parser’s', () => {
  it('finds the same subject: one category’s frequency, one day’s dish, overlapping days of a day-list kind', () => {
    expect(sameSubject(fish(2, 2), fish(2, 3))).to.equal(true);
    expect(sameSubject(fish(2, 2), proposal({ kind: 'CategoryFrequency', category: 'Meat', minimumPerWeek: 0, maximumPerWeek: 0 }))).to.equal(false);
    expect(sameSubject(fish(2, 2), proposal({ kind: 'CategoryExcludedDays', category: 'Fish', excludedWeekdays: ['Monday'] }))).to.equal(false);
    expect(sameSubject(onDay('Taco', 'Friday'), onDay('Fish', 'Friday')), 'one dish a day').to.equal(true);
    expect(sameSubject(onDay('Taco', 'Friday'), onDay('Taco', 'Monday'))).to.equal(false);
    expect(sameSubject(onDay('Taco', null, '2027-12-24'), onDay('Fish', null, '2027-12-24'))).to.equal(true);
    expect(sameSubject(onDay('Taco', null, '2027-12-24'), onDay('Taco', null, '2027-12-31'))).to.equal(false);
    expect(sameSubject(dinner('17:30', ['Monday', 'Friday']), dinner('18:00', ['Friday']))).to.equal(true);
    expect(sameSubject(dinner('17:30', ['Monday', 'Friday']), dinner('18:00', ['Saturday', 'Sunday']))).to.equal(false);
    expect(sameSubject(price([]), price(['Monday'])), 'an empty list is every day').to.equal(true);
    expect(sameSubject(cooking([], '2027-12-24'), cooking([], null))).to.equal(false);
    expect(sameSubject(cooking(['Monday'], null), cooking([], null))).to.equal(true);
    expect(sameSubject(proposal({ kind: 'RepeatAfterDays', days: 7 }), proposal({ kind: 'RepeatAfterDays', days: 14 }))).to.equal(true);
  });

  it('keeps the model’s proposals in order, adds what only the offline parser heard, and takes the model’s unheard', () => {
    const model: ParseRulesResponse = { proposals: [fish(2, 3), dinner('18:00', ['Saturday', 'Sunday'])], leftoverDinners: null, unheard: ['onions'] };
    const offline: ParseRulesResponse = {
      proposals: [fish(2, 2), onDay('Taco', 'Friday'), dinner('17:00', ['Monday', 'Friday'])],
      leftoverDinners: { summary: 'Leftovers welcome', enabled: true, askedEveryDays: null },
      unheard: ['the kids hate onions', 'taco'],
    };
    expect(mergeParses(model, offline)).to.deep.equal({
      proposals: [fish(2, 3), dinner('18:00', ['Saturday', 'Sunday']), onDay('Taco', 'Friday'), dinner('17:00', ['Monday', 'Friday'])],
      leftoverDinners: offline.leftoverDinners,
      unheard: ['onions'],
    });
    const withLeftovers = { ...model, leftoverDinners: { summary: 'No leftovers', enabled: false, askedEveryDays: null } };
    expect(mergeParses(withLeftovers, offline).leftoverDinners).to.deep.equal(withLeftovers.leftoverDinners);
  });

  it('takes the offline parser’s unheard when the model heard nothing at all', () => {
    const text = 'fish twice a week, the kids hate onions';
    const silent: ParseRulesResponse = { proposals: [], leftoverDinners: null, unheard: [text] };
    const offline: ParseRulesResponse = { proposals: [fish(2, 2)], leftoverDinners: null, unheard: ['the kids hate onions'] };
    expect(mergeParses(silent, offline)).to.deep.equal(offline);
    // a model that heard only leftovers heard something: its unheard stands
    const leftoversOnly = { ...silent, leftoverDinners: { summary: 'No leftovers', enabled: false, askedEveryDays: null } };
    expect(mergeParses(leftoversOnly, offline).unheard).to.deep.equal([text]);
  });

  describe('a model that bans a category for a food (issue 45)', () => {
    const never = (category: 'Meat' | 'Fish' | 'Poultry') => proposal({ kind: 'CategoryFrequency', category, minimumPerWeek: 0, maximumPerWeek: 0 });
    const merged = (text: string, model: ParseRulesResponse) => {
      const ctx = { today: '2026-11-22' };
      return mergeModelReading(model, parseRulesOffline(text, ctx), dishesNamed(text, ctx));
    };

    it('drops the ban and reports the food’s clause: "no pork thx", "ikke laks", "ingen reker, æ e allergisk"', () => {
      for (const [text, category] of [
        ['no pork thx', 'Meat'],
        ['ikke laks', 'Fish'],
        ['ingen reker, æ e allergisk', 'Fish'],
        ['no turkey on fridays', 'Poultry'],
      ] as const) {
        const answer = merged(text, { proposals: [never(category)], leftoverDinners: null, unheard: [] });
        expect(answer.proposals, text).to.deep.equal([]);
        expect(answer.unheard, text).to.deep.equal([text]);
      }
    });

    it('keeps a ban the sentence says in the category’s own words, or the offline parser heard too', () => {
      const redMeat = merged('no red meat, and no pork either', { proposals: [never('Meat')], leftoverDinners: null, unheard: ['no pork either'] });
      expect(redMeat.proposals.map((p) => p.request.payload)).to.deep.equal([never('Meat').request.payload]);
      expect(redMeat.unheard).to.deep.equal(['no pork either']);
      const vegetarians = merged('we are vegetarians, no tofu', {
        proposals: [never('Meat'), never('Poultry'), never('Fish')],
        leftoverDinners: null,
        unheard: ['no tofu'],
      });
      expect(vegetarians.proposals).to.have.length(3);
      expect(vegetarians.unheard).to.deep.equal(['no tofu']);
    });
  });
});
