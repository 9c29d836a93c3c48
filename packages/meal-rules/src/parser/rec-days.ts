import { sortWeekdays, WEEK } from './calendar.js';
import { type Item, is } from './tags.js';
import type { Weekday } from './types.js';

// Weekdays named in a clause: single days, "Monday to Thursday" / "man–tor"
// ranges (wrapping past Sunday), and groups such as weekdays, weekend and
// every day.

export interface DayFacts {
  /** in the order they were named, without repeats */
  days: Weekday[];
  /** "every day", "daily", "hver dag" */
  everyDay: boolean;
  /** at least one day was named on its own ("Mondays"), not only as a group ("weekdays") */
  named: boolean;
  /** "every other Friday", "annenhver fredag": a fortnightly wish no rule holds */
  alternate: boolean;
  /** position of the first mention, -1 when none */
  pos: number;
  /** the days "except"/"unntatt" took out, for a following "then at 14:00" / "da kl 14" */
  excepted: Weekday[];
  /** "except Fridays when we eat at 18.30": where the excepted days' own value starts, -1 when none */
  whenPos: number;
  /** "the other weekdays", "resten av uka": the days to take the already named ones from */
  others: readonly Weekday[] | null;
}

function span(from: Weekday, to: Weekday): Weekday[] {
  const a = WEEK.indexOf(from);
  const b = WEEK.indexOf(to);
  const out: Weekday[] = [];
  for (let k = a; out.length < 7; k = (k + 1) % 7) {
    out.push(WEEK[k] as Weekday);
    if (k === b) break;
  }
  return out;
}

export function findDays(seq: Item[], used: boolean[]): DayFacts {
  const facts: DayFacts = { days: [], everyDay: false, named: false, alternate: false, pos: -1, excepted: [], others: null, whenPos: -1 };
  const removed: Weekday[] = [];
  let excepting = false;
  const add = (list: readonly Weekday[], p: number) => {
    if (excepting) {
      removed.push(...list);
      return;
    }
    for (const d of list) if (!facts.days.includes(d)) facts.days.push(d);
    if (facts.pos < 0) facts.pos = p;
  };
  for (let p = 0; p < seq.length; p++) {
    const it = seq[p];
    if (used[p] || !it) continue;
    if (is(it, 'except')) {
      excepting = true;
      used[p] = true;
      continue;
    }
    if (is(it, 'when') && excepting && removed.length > 0) {
      excepting = false;
      facts.whenPos = p;
      continue;
    }
    if (is(it, 'otherDays')) {
      used[p] = true;
      facts.others = it.tag.days;
      if (facts.pos < 0) facts.pos = p;
      continue;
    }
    if (is(it, 'days')) {
      used[p] = true;
      if (it.tag.every && !excepting) {
        facts.everyDay = true;
        if (facts.pos < 0) facts.pos = p;
      } else {
        add(it.tag.days, p);
      }
      continue;
    }
    if (!is(it, 'day')) continue;
    used[p] = true;
    facts.named = true;
    if (is(seq[p - 1], 'everyOther')) facts.alternate = true;
    if (is(seq[p - 1], 'every') || is(seq[p - 1], 'from')) used[p - 1] = true;
    const link = seq[p + 1];
    const to = seq[p + 2];
    if ((is(link, 'rangeTo') || is(link, 'dash')) && is(to, 'day')) {
      add(span(it.tag.day, to.tag.day), p);
      used[p + 1] = true;
      used[p + 2] = true;
      p += 2;
    } else {
      add([it.tag.day], p);
    }
  }
  return removed.length > 0 ? without(facts, removed) : facts;
}

/** "every day except Sunday", "weekdays except Fridays" */
function without(facts: DayFacts, removed: Weekday[]): DayFacts {
  // "dinner at 18:30 except Fridays": with no days named, every day is meant
  const from = facts.everyDay || facts.days.length === 0 ? [...WEEK] : facts.days;
  return { ...facts, everyDay: false, named: true, days: from.filter((d) => !removed.includes(d)), excepted: sortWeekdays(removed) };
}
