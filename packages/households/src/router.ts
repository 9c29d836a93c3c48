import type { AccountDirectory, Clock, RandomBytes } from '@svc/contracts';
import { ApiRouter, principalOf } from '@svc/http-kit';
import { TIME_ZONE_IDS } from './formats.js';
import type { HouseholdStore } from './HouseholdStore.js';
import { createHousehold, updateHousehold } from './households.js';
import type { IntakeMode } from './intake.js';
import { changeRole, deleteHousehold, removeMember, transferOwnership } from './life.js';
import { invite, listMembers } from './members.js';
import { type CompleteOnboardingRequest, completeOnboarding } from './onboarding.js';
import * as s from './schemas.js';
import type { CreateHouseholdRequest, UpdateHouseholdRequest } from './settings.js';

export interface HouseholdsRouterDeps {
  store: HouseholdStore;
  accounts: AccountDirectory;
  clock: Clock;
  random: RandomBytes;
  intakeMode: IntakeMode;
  /** INVITE_CODES, normalised (upper case, trimmed). */
  configCodes: ReadonlySet<string>;
  welcomeCredits: number;
}

type HouseholdParams = { householdId: string };

const TIME_ZONES_CACHE = 'private, max-age=86400';
const notMember = { 404: ['not_found'] };
const householdResponses = { 200: { description: 'The household', schema: s.householdResponse } };

/** The households routes, with their schemas (they validate requests and feed the OpenAPI document). */
export function createHouseholdsRouter(deps: HouseholdsRouterDeps): ApiRouter {
  const { store, accounts, clock } = deps;
  const now = () => clock.now();
  const api = new ApiRouter({ tags: ['Households'] });

  api.route(
    {
      method: 'get',
      path: '/api/v1/time-zones',
      operationId: 'listTimeZones',
      auth: true,
      summary: 'Every time-zone id of the server: exactly the ids a household accepts',
      responses: { 200: { description: 'The ids, unsorted; Cache-Control: private, max-age=86400', schema: s.timeZonesResponse } },
    },
    (_req, res) => {
      // After requireAuth's no-store: the list is the same for everyone and changes only with the server.
      res.setHeader('Cache-Control', TIME_ZONES_CACHE);
      res.json({ ids: TIME_ZONE_IDS });
    },
  );

  api.route<CreateHouseholdRequest>(
    {
      method: 'post',
      path: '/api/v1/households',
      operationId: 'createHousehold',
      auth: true,
      summary: 'Create a household; the caller becomes its Owner',
      description:
        'Opens a subscription on the default plan; the first household a user creates brings the welcome credits. ' +
        'Intake: open, invite-only (403 invite_required / invite_code_invalid) or paused (403 intake_paused, the caller is put on the waitlist).',
      body: s.createHouseholdBody,
      responses: {
        201: { description: 'Created', schema: s.householdResponse, headers: { Location: { description: 'The household', schema: { type: 'string' } } } },
      },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['invite_required', 'invite_code_invalid', 'intake_paused'] },
    },
    async (req, res) => {
      const household = await createHousehold(
        { store, accounts, intakeMode: deps.intakeMode, configCodes: deps.configCodes, welcomeCredits: deps.welcomeCredits, now },
        principalOf(req).userId,
        req.input.body,
      );
      res.status(201).location(`/api/v1/households/${household.id}`).json(household);
    },
  );

  api.route<unknown, unknown, HouseholdParams>(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}',
      operationId: 'getHousehold',
      auth: true,
      summary: 'A household the caller is a member of',
      params: s.householdIdParams,
      responses: householdResponses,
      errorCodes: notMember,
    },
    async (req, res) => {
      const { household } = await store.getForMember(principalOf(req).userId, req.input.params.householdId);
      res.json(household);
    },
  );

  api.route<UpdateHouseholdRequest, unknown, HouseholdParams>(
    {
      method: 'patch',
      path: '/api/v1/households/{householdId}',
      operationId: 'updateHousehold',
      auth: true,
      summary: 'Change settings (Owner only); a member left out or null is left as it is',
      params: s.householdIdParams,
      body: s.updateHouseholdBody,
      responses: householdResponses,
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      res.json(await updateHousehold({ store, now }, principalOf(req).userId, req.input.params.householdId, req.input.body));
    },
  );

  api.route<CompleteOnboardingRequest, unknown, HouseholdParams>(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/onboarding/complete',
      operationId: 'completeOnboarding',
      auth: true,
      summary: "Complete onboarding (any member); the recap goes into the day's thread",
      description:
        'The first call stamps the time, applies defaultDinnerTime and writes the recap (from the household data, no credits). ' +
        'Later calls answer 200 with the original stamp, alreadyCompleted true and the same conversationId, and write nothing. ' +
        '409 onboarding_in_progress when another completion of the same household holds it for more than 5 s.',
      params: s.householdIdParams,
      body: s.completeOnboardingBody,
      responses: { 200: { description: 'Completed (now or before)', schema: s.completeOnboardingResponse } },
      errorCodes: { 400: ['validation_failed'], ...notMember, 409: ['onboarding_in_progress'] },
    },
    async (req, res) => {
      res.json(
        await completeOnboarding(
          { store, accounts, now },
          { userId: principalOf(req).userId, householdId: req.input.params.householdId, body: req.input.body },
        ),
      );
    },
  );

  api.route<{ role: 'Adult' | 'Junior' }, unknown, HouseholdParams>(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/invitations',
      operationId: 'createInvitation',
      auth: true,
      summary: 'Invite an Adult or a Junior (Owner or Adult); the code is random, single use, valid 7 days',
      params: s.householdIdParams,
      body: s.createInvitationBody,
      responses: { 201: { description: 'The invitation; hand its code to the invitee', schema: s.invitationResponse } },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      const invitation = await invite(
        { store, random: deps.random, now: now() },
        { userId: principalOf(req).userId, householdId: req.input.params.householdId, role: req.input.body.role },
      );
      res.status(201).json(invitation);
    },
  );

  api.route<{ code: string }>(
    {
      method: 'post',
      path: '/api/v1/invitations/accept',
      operationId: 'acceptInvitation',
      auth: true,
      summary: 'Join a household with an invitation code',
      body: s.acceptInvitationBody,
      responses: { 200: { description: 'The new membership', schema: s.membershipResponse } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 404: ['invitation_not_found'], 409: ['already_member'] },
    },
    async (req, res) => {
      res.json(await store.acceptInvitation({ userId: principalOf(req).userId, code: req.input.body.code, at: now() }));
    },
  );

  api.route<unknown, unknown, HouseholdParams>(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/members',
      operationId: 'listMembers',
      auth: true,
      summary: 'The members (any member may ask)',
      params: s.householdIdParams,
      responses: { 200: { description: 'Members, in the order they joined', schema: s.membersResponse } },
      errorCodes: notMember,
    },
    async (req, res) => {
      const { householdId } = req.input.params;
      await store.roleOf(principalOf(req).userId, householdId);
      res.json(await listMembers(store, accounts, householdId));
    },
  );

  api.route<unknown, unknown, HouseholdParams & { conversationId: string }>(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/conversations/{conversationId}',
      operationId: 'getConversation',
      auth: true,
      summary: "A day's thread of the household (any member)",
      params: s.conversationParams,
      responses: { 200: { description: 'The thread and its messages, oldest first', schema: s.conversationResponse } },
      errorCodes: notMember,
    },
    async (req, res) => {
      const { householdId, conversationId } = req.input.params;
      await store.roleOf(principalOf(req).userId, householdId);
      res.json(await store.conversation(householdId, conversationId));
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/v1/households/{householdId}/members/{memberId}',
      operationId: 'changeMemberRole',
      auth: true,
      summary: "Change a member's role to Adult or Junior (Owner only)",
      description:
        "Takes effect on the member's next request. Owner is 400 invalid_role (hand the household over with POST …/owner); " +
        "the Owner's own role cannot change here: 409 owner_must_transfer.",
      params: s.memberParams,
      body: s.changeRoleBody,
      responses: { 200: { description: 'The member as changed', schema: s.memberResponse } },
      errorCodes: { 400: ['validation_failed', 'invalid_role'], 403: ['forbidden'], 404: ['not_found', 'member_not_found'], 409: ['owner_must_transfer'] },
    },
    async (req, res) => {
      const { householdId, memberId } = req.input.params;
      res.json(await changeRole({ store, accounts }, { userId: principalOf(req).userId, householdId, memberId, role: req.input.body.role }));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}/members/{memberId}',
      operationId: 'removeMember',
      auth: true,
      summary: 'Remove a member (Owner), or leave (the member themself)',
      description:
        "The household's data stays. The removed person loses access on their next request. The Owner removes anyone else; any other member " +
        'removes only themself (403 forbidden otherwise); the Owner cannot leave: 409 owner_must_transfer (hand over, or delete the household).',
      params: s.memberParams,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], 404: ['not_found', 'member_not_found'], 409: ['owner_must_transfer'] },
    },
    async (req, res) => {
      const { householdId, memberId } = req.input.params;
      await removeMember(store, { userId: principalOf(req).userId, householdId, memberId });
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/owner',
      operationId: 'transferOwnership',
      auth: true,
      summary: 'Hand the household over to an Adult who has an account (Owner only); the old Owner becomes an Adult',
      description:
        'Atomic: the household has exactly one Owner before and after, also when hand-overs race. 409 invalid_role for a Junior or a member without an account.',
      params: s.householdIdParams,
      body: s.transferOwnershipBody,
      responses: householdResponses,
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], 404: ['not_found', 'member_not_found'], 409: ['invalid_role'] },
    },
    async (req, res) => {
      res.json(
        await transferOwnership(store, { userId: principalOf(req).userId, householdId: req.input.params.householdId, memberId: req.input.body.memberId }),
      );
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}',
      operationId: 'deleteHousehold',
      auth: true,
      summary: 'Delete the household with everything in it (Owner only); confirmName must be its name',
      description:
        'Deletes, in one transaction, its members, invitations, threads, plan and credits, meal rules, meal events and calendar feed. ' +
        "400 confirmation_mismatch when confirmName is not exactly the household's name.",
      params: s.householdIdParams,
      body: s.deleteHouseholdBody,
      responses: { 204: { description: 'Deleted' } },
      errorCodes: { 400: ['validation_failed', 'confirmation_mismatch'], 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      await deleteHousehold(store, { userId: principalOf(req).userId, householdId: req.input.params.householdId, confirmName: req.input.body.confirmName });
      res.status(204).end();
    },
  );

  return api;
}
