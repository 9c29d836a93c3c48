import type { Knex } from 'knex';

/**
 * Social sign-in: the identities (Google, Apple) linked to each account, and the single-use codes
 * the app flow hands to the app for POST /auth/exchange.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('account_identities', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('row id');
    t.uuid('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE').comment('the account this identity signs in to');
    t.text('provider').notNullable().comment('google or apple (web and native Apple sign-in share one subject space)');
    t.text('subject').notNullable().comment("the provider's stable user id (`sub`); never an address, which can change hands");
    t.text('email').nullable().comment('the address the provider gave when the identity was linked, as given; not the login');
    t.boolean('email_verified').notNullable().comment('whether the provider vouched for that address at link time');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('when the identity was linked');
    t.unique(['provider', 'subject'], { indexName: 'account_identities_provider_subject_key' });
    t.index(['account_id'], 'account_identities_account_idx');
  });
  await knex.raw("alter table account_identities add constraint account_identities_provider_check check (provider in ('google', 'apple'))");

  await knex.schema.createTable('app_signin_codes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()')).comment('row id');
    t.binary('code_hash').notNullable().unique().comment('SHA-256 of the code handed to the app (256 random bits); the code itself is never stored');
    t.uuid('account_id').notNullable().references('id').inTable('accounts').onDelete('CASCADE').comment('the account the code signs in');
    t.text('code_challenge').notNullable().comment('the PKCE S256 challenge the app sent to the challenge operation; the exchange must present its verifier');
    t.text('redirect_uri').notNullable().comment('the allow-listed app URI the code was sent to');
    t.timestamp('created_at', { useTz: true }).notNullable().comment('when it was issued');
    t.timestamp('expires_at', { useTz: true }).notNullable().comment('two minutes after issue; no exchange after this');
    t.timestamp('used_at', { useTz: true }).nullable().comment('set by the first exchange attempt, successful or not; a code works at most once');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('app_signin_codes');
  await knex.schema.dropTableIfExists('account_identities');
}
