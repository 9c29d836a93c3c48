import { expect } from 'chai';
import { isValidCreateRequest, ruleRequestIssues, validateCreateRequest } from '../src/rule-validation.js';
import { KINDS, SAMPLES, sample } from './helpers.js';

describe('rule-validation (the one check behind create, replace and parse)', () => {
  it('accepts every sample kind as-is', () => {
    for (const kind of KINDS) expect(validateCreateRequest(SAMPLES[kind]), kind).to.deep.equal([]);
  });

  it('names the field of a shape failure and of a semantic failure', () => {
    const shape = sample('RepeatAfterDays');
    shape.payload.days = 0;
    expect(ruleRequestIssues(shape).map((i) => i.field)).to.deep.equal(['payload.days']);
    const semantic = sample('CategoryFrequency');
    semantic.payload.minimumPerWeek = 5;
    expect(validateCreateRequest(semantic)).to.deep.equal(['payload.minimumPerWeek must not be above maximumPerWeek']);
  });

  it('checks the shape before the rules between members (no crash on a payload without members)', () => {
    expect(isValidCreateRequest({ payload: { kind: 'CategoryOnDay' }, strength: 'Hard', scope: 'Permanent', startDate: null, endDate: null })).to.equal(false);
    expect(isValidCreateRequest(null)).to.equal(false);
    expect(isValidCreateRequest('fish')).to.equal(false);
  });

  it('accepts HH:mm:ss as create does', () => {
    const body = sample('DinnerTimeOnWeekday');
    body.payload.time = '17:30:00';
    expect(isValidCreateRequest(body)).to.equal(true);
  });
});
