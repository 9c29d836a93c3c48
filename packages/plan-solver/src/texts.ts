import type { StarterLanguage } from '@svc/contracts';
import type { PlanEvent, PlanRule, Weekday } from './types.js';

const CATEGORY: Record<StarterLanguage, Record<string, string>> = {
  en: {
    Fish: 'fish',
    Meat: 'meat',
    Poultry: 'poultry',
    Vegetarian: 'vegetarian',
    Vegan: 'vegan',
    Soup: 'soup',
    Pasta: 'pasta',
    Taco: 'taco',
    Leftovers: 'leftovers',
    Other: 'other dishes',
  },
  nb: {
    Fish: 'fisk',
    Meat: 'kjøtt',
    Poultry: 'fjærkre',
    Vegetarian: 'vegetar',
    Vegan: 'vegansk',
    Soup: 'suppe',
    Pasta: 'pasta',
    Taco: 'taco',
    Leftovers: 'rester',
    Other: 'annet',
  },
};

const WEEKDAY: Record<StarterLanguage, Record<Weekday, string>> = {
  en: { Monday: 'Mondays', Tuesday: 'Tuesdays', Wednesday: 'Wednesdays', Thursday: 'Thursdays', Friday: 'Fridays', Saturday: 'Saturdays', Sunday: 'Sundays' },
  nb: { Monday: 'mandager', Tuesday: 'tirsdager', Wednesday: 'onsdager', Thursday: 'torsdager', Friday: 'fredager', Saturday: 'lørdager', Sunday: 'søndager' },
};

const category = (lang: StarterLanguage, c: string): string => CATEGORY[lang][c] ?? c;

function list(lang: StarterLanguage, items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} ${lang === 'nb' ? 'og' : 'and'} ${items[items.length - 1]}`;
}

function days(lang: StarterLanguage, weekdays: readonly Weekday[], date: string | null): string {
  const names = weekdays.map((w) => WEEKDAY[lang][w]);
  if (date) names.push(date);
  return list(lang, names);
}

/** One rule in a short sentence of the household's language. */
export function describeRule(lang: StarterLanguage, rule: PlanRule | null): string {
  if (!rule) return lang === 'nb' ? 'samme rett høyst én gang på 7 dager' : 'the same dish at most once in 7 days';
  const p = rule.payload;
  const nb = lang === 'nb';
  switch (p.kind) {
    case 'CategoryFrequency':
      return nb
        ? `${category(lang, p.category)} ${p.minimumPerWeek}–${p.maximumPerWeek} ganger i uka`
        : `${category(lang, p.category)} ${p.minimumPerWeek}–${p.maximumPerWeek} times a week`;
    case 'CategoryExcludedDays':
      return nb
        ? `ikke ${category(lang, p.category)} på ${days(lang, p.excludedWeekdays, null)}`
        : `no ${category(lang, p.category)} on ${days(lang, p.excludedWeekdays, null)}`;
    case 'CategoryOnDay':
      return nb
        ? `${category(lang, p.category)} på ${days(lang, p.weekday ? [p.weekday] : [], p.specificDate)}`
        : `${category(lang, p.category)} on ${days(lang, p.weekday ? [p.weekday] : [], p.specificDate)}`;
    case 'MaximumActiveCookingTime':
      return nb
        ? `høyst ${p.minutes} minutter matlaging på ${days(lang, p.weekdays, p.specificDate)}`
        : `at most ${p.minutes} minutes of cooking on ${days(lang, p.weekdays, p.specificDate)}`;
    case 'DinnerTimeOnWeekday':
      return nb ? `middag klokka ${p.time} på ${days(lang, p.weekdays, null)}` : `dinner at ${p.time} on ${days(lang, p.weekdays, null)}`;
    case 'PriceClassOnDays':
      return nb
        ? `${p.ceiling === 'Cheap' ? 'billige retter' : 'billige eller middels dyre retter'} på ${days(lang, p.weekdays, null)}`
        : `${p.ceiling === 'Cheap' ? 'cheap dishes' : 'cheap or mid-priced dishes'} on ${days(lang, p.weekdays, null)}`;
    case 'RepeatAfterDays':
      return nb ? `samme rett høyst én gang på ${p.days} dager` : `the same dish at most once in ${p.days} days`;
  }
}

/** One event in a short sentence. */
export function describeEvent(lang: StarterLanguage, e: PlanEvent): string {
  const nb = lang === 'nb';
  const what = {
    Guests: nb ? 'gjester' : 'guests',
    EatingOut: nb ? 'spiser ute' : 'eating out',
    Away: nb ? 'borte' : 'away',
    Activity: nb ? 'aktivitet' : 'activity',
  }[e.eventType];
  const parts = [`${what} ${e.date}`];
  if (e.eventType !== 'EatingOut') {
    if (e.servingTime) parts.push(nb ? `middag klokka ${e.servingTime}` : `dinner at ${e.servingTime}`);
    if (e.availableCookingMinutes) parts.push(nb ? `${e.availableCookingMinutes} minutter til matlaging` : `${e.availableCookingMinutes} minutes to cook`);
  }
  return parts.join(', ');
}

export const texts = {
  held: (lang: StarterLanguage, rule: string) => (lang === 'nb' ? `Regel: ${rule}` : `Rule: ${rule}`),
  broken: (lang: StarterLanguage, rule: string) => (lang === 'nb' ? `Regel: ${rule} (ikke oppfylt denne dagen)` : `Rule: ${rule} (not met this day)`),
  noDinnerRule: (lang: StarterLanguage, rule: string) => (lang === 'nb' ? `Regel: ${rule} (ingen middag denne dagen)` : `Rule: ${rule} (no dinner this day)`),
  event: (lang: StarterLanguage, event: string) => (lang === 'nb' ? `Hendelse: ${event}` : `Event: ${event}`),
  chosen: (lang: StarterLanguage, dish: string) => (lang === 'nb' ? `Valgt: ${dish}, innenfor alle harde regler` : `Chosen: ${dish}, within every hard rule`),
  unmet: (lang: StarterLanguage, rule: string, cost: number) =>
    lang === 'nb' ? `Ikke oppfylt: ${rule} (${cost} brudd)` : `Not met: ${rule} (${cost} ${cost === 1 ? 'break' : 'breaks'})`,
  conflict: (lang: StarterLanguage, items: string[]) =>
    lang === 'nb' ? `Dette kan ikke gjelde samtidig: ${items.join('; ')}` : `These cannot all hold together: ${items.join('; ')}`,
  noDish: (lang: StarterLanguage) =>
    lang === 'nb'
      ? 'Det finnes ingen rett å velge for disse dagene, selv uten regler og hendelser'
      : 'There is no dish to choose on these days, even without any rule or event',
};
