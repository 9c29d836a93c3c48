import { listVersions } from '@svc/db';

/**
 * A version per household's rules (see @svc/db `listVersions`: statement-level triggers on
 * meal_rules move it with every change, whoever writes), so the rules answer an instance has cached
 * is known to be current or not by one number read with the session (see the store's answer cache).
 */
export const { up, down } = listVersions({
  table: 'meal_rules',
  versions: 'meal_rule_list_versions',
  sequence: 'meal_rule_list_version_seq',
  fn: 'meal_rule_list_bump',
  trigger: 'meal_rule_list',
});
