import type { HouseholdNewsEvent, HouseholdRole } from '@svc/contracts';

/** The languages notifications are written in; a household's `preferredLanguage` picks one (English otherwise). */
export type TextLanguage = 'en' | 'nb';

interface Texts {
  /** Stands in for a name that is unknown, or that looks like an e-mail address (never shown). */
  someone: string;
  /** Title of a merged message about several households. */
  news: string;
  roles: Record<HouseholdRole, string>;
  events: Record<HouseholdNewsEvent['type'], string>;
  /** Body of several news merged into one message. */
  merged: string;
  /** A meal event's reminder: `{type}` the event's kind, `{time}` its serving time, `{date}` its date. */
  reminder: { title: string; body: string };
  /** The kinds of meal event as a reminder names them. */
  eventTypes: Record<string, string>;
}

/**
 * Every text a notification of this service carries, in one table. `{actor}` is the person who
 * acted, `{subject}` the member it is about, `{role}` the new role, `{household}` the household's
 * name, `{count}` a number. Names are display names only: no e-mail address, no secret.
 */
export const TEXTS: Record<TextLanguage, Texts> = {
  en: {
    someone: 'Someone',
    news: 'Household news',
    roles: { Owner: 'the owner', Adult: 'an adult', Junior: 'a junior' },
    events: {
      memberJoined: '{subject} joined {household}',
      memberLeft: '{subject} left {household}',
      memberRemoved: '{actor} removed {subject} from {household}',
      roleChanged: '{actor} made {subject} {role}',
      ownershipTransferred: '{actor} handed {household} over to {subject}',
      householdRenamed: '{actor} renamed the household to {household}',
    },
    merged: '{count} changes in your household',
    reminder: { title: 'Reminder: {type}', body: '{type} at {time} on {date}' },
    eventTypes: { Guests: 'Guests', EatingOut: 'Eating out', Away: 'Away', Activity: 'Activity' },
  },
  nb: {
    someone: 'Noen',
    news: 'Nytt fra husstanden',
    roles: { Owner: 'eier', Adult: 'voksen', Junior: 'junior' },
    events: {
      memberJoined: '{subject} ble med i {household}',
      memberLeft: '{subject} forlot {household}',
      memberRemoved: '{actor} fjernet {subject} fra {household}',
      roleChanged: '{actor} gjorde {subject} til {role}',
      ownershipTransferred: '{actor} overlot {household} til {subject}',
      householdRenamed: '{actor} ga husstanden nytt navn: {household}',
    },
    merged: '{count} endringer i husstanden',
    reminder: { title: 'Påminnelse: {type}', body: '{type} kl. {time} {date}' },
    eventTypes: { Guests: 'Gjester', EatingOut: 'Spise ute', Away: 'Borte', Activity: 'Aktivitet' },
  },
};

/** `nb`, `nb-NO`, `no` and `nn` read Bokmål; anything else English. */
export function textLanguage(preferredLanguage: string | undefined): TextLanguage {
  const primary = (preferredLanguage ?? '').toLowerCase().split('-')[0];
  return primary === 'nb' || primary === 'no' || primary === 'nn' ? 'nb' : 'en';
}

/** A display name fit to show: trimmed, and never something that looks like an e-mail address. */
export function shownName(name: string | null | undefined, language: TextLanguage): string {
  const trimmed = (name ?? '').trim();
  return trimmed === '' || /\S@\S/.test(trimmed) ? TEXTS[language].someone : trimmed;
}

export function fill(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, key: string) => String(values[key] ?? ''));
}

/** Title (the household's name) and body of the news of one change. */
export function newsText(
  language: TextLanguage,
  event: HouseholdNewsEvent,
  names: { actor?: string | null; subject?: string | null; household: string },
): { title: string; body: string } {
  const t = TEXTS[language];
  const household = names.household.trim() || t.news;
  const body = fill(t.events[event.type], {
    actor: shownName(names.actor, language),
    subject: shownName(names.subject, language),
    role: event.role ? t.roles[event.role] : '',
    household,
  });
  return { title: [...household].slice(0, 100).join(''), body: [...body].slice(0, 500).join('') };
}

/** Title and body of a meal event's reminder. */
export function reminderText(language: TextLanguage, event: { eventType: string; date: string; servingTime: string }): { title: string; body: string } {
  const t = TEXTS[language];
  const values = { type: t.eventTypes[event.eventType] ?? event.eventType, time: event.servingTime, date: event.date };
  return { title: fill(t.reminder.title, values), body: fill(t.reminder.body, values) };
}
