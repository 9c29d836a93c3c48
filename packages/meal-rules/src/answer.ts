import { InputError, PartValidator, withStringLimits } from '@svc/http-kit';
import { ParseRulesResponseSchema } from './schemas.js';

/**
 * The answer's envelope: the contract's ParseRulesResponse with each `request` only required to be
 * an object (strings capped at the sentence's 1000 characters). Each request is then checked by the
 * service exactly as create checks a client's (schema and rules between fields): one proposal the
 * create operation would refuse is dropped to `unheard`, not the whole answer.
 */
const envelope = new PartValidator(
  withStringLimits(
    {
      ...ParseRulesResponseSchema,
      properties: {
        ...ParseRulesResponseSchema.properties,
        proposals: {
          ...ParseRulesResponseSchema.properties.proposals,
          items: {
            ...ParseRulesResponseSchema.properties.proposals.items,
            properties: { ...ParseRulesResponseSchema.properties.proposals.items.properties, request: { type: 'object' } },
          },
        },
      },
    },
    1000,
  ),
  'body',
);

/** Why `value` is not a parser's answer in the documented envelope; undefined when it is one. */
export function answerIssues(value: unknown): string | undefined {
  try {
    envelope.check(value);
    return undefined;
  } catch (err) {
    if (err instanceof InputError) return err.message;
    throw err;
  }
}
