import { ApiRouter, loadedRead, principalOf, sendJsonText } from '@svc/http-kit';
import { TIME_ZONE_IDS } from './formats.js';
import { householdRead } from './reads.js';
import * as s from './schemas.js';
import type { HouseholdsService } from './service.js';

/** What the households routes need: the package's service (which holds its store, clock and the accounts directory). */
export interface RouterOptions {
  service: HouseholdsService;
}

const TIME_ZONES_CACHE = 'private, max-age=86400';
/** The answer of GET /time-zones, the same to everyone while the process lives: made once as UTF-8 bytes, sent as they are. */
const TIME_ZONES_BODY = Buffer.from(JSON.stringify({ ids: TIME_ZONE_IDS }), 'utf8');
const notMember = { 404: ['not_found'] };
const memberErrors = { 403: ['forbidden'], 404: ['not_found', 'member_not_found'] };

/** The households operations, with their schemas (they validate requests and feed the OpenAPI document). */
export function createRouter(options: RouterOptions): ApiRouter {
  const { service } = options;
  const api = new ApiRouter({ tags: ['Households'] });

  api.route(
    {
      method: 'get',
      path: '/api/v1/time-zones',
      operationId: 'listTimeZones',
      auth: true,
      summary: 'Every time-zone id of the server: exactly the ids a household accepts',
      responses: { 200: { description: 'The ids, unsorted; Cache-Control: private, max-age=86400', schema: s.TimeZonesSchema } },
    },
    (_req, res) => {
      // After requireAuth's no-store: the list is the same for everyone and changes only with the server.
      res.setHeader('Cache-Control', TIME_ZONES_CACHE);
      sendJsonText(res, TIME_ZONES_BODY);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households',
      operationId: 'createHousehold',
      etag: true,
      auth: true,
      summary: 'Create a household; the caller becomes its Owner',
      description:
        'Opens a subscription on the default plan; the first household a user creates brings the welcome credits. ' +
        'Intake: open, invite-only (403 invite_required / invite_code_invalid) or paused (403 intake_paused, the caller is put on the waitlist).',
      body: s.CreateHouseholdBody,
      responses: {
        201: { description: 'Created', schema: s.HouseholdSchema, headers: { Location: { description: 'The household', schema: { type: 'string' } } } },
      },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['invite_required', 'invite_code_invalid', 'intake_paused'] },
    },
    async (req, res) => {
      const household = await service.create(principalOf(req).userId, req.input.body);
      res.status(201).location(`/api/v1/households/${household.id}`).json(household);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}',
      tokenScope: 'households:read',
      operationId: 'getHousehold',
      etag: true,
      auth: true,
      summary: 'A household the caller is a member of',
      params: s.HouseholdIdParams,
      responses: { 200: { description: 'The household', schema: s.HouseholdSchema } },
      errorCodes: notMember,
      compiledResponse: true,
      read: householdRead,
    },
    async (req, res) => {
      res.json(await service.get(principalOf(req), req.input.params.householdId!, loadedRead(req, householdRead)));
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/v1/households/{householdId}',
      operationId: 'updateHousehold',
      etag: true,
      current: (req) => service.get(principalOf(req), req.input.params.householdId!),
      auth: true,
      summary: 'Change settings (Owner only); a member left out or null is left as it is',
      params: s.HouseholdIdParams,
      body: s.UpdateHouseholdBody,
      responses: { 200: { description: 'The household', schema: s.HouseholdSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      res.json(await service.update(principalOf(req).userId, req.input.params.householdId!, req.input.body));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}',
      operationId: 'deleteHousehold',
      current: (req) => service.get(principalOf(req), req.input.params.householdId!),
      auth: true,
      summary: 'Delete the household with everything in it (Owner only); confirmName must be its name',
      description:
        'Deletes, in one transaction, its members, invitations, threads, plan and credits, meal rules, meal events and calendar feed. ' +
        "400 confirmation_mismatch when confirmName is not exactly the household's name.",
      params: s.HouseholdIdParams,
      body: s.DeleteHouseholdBody,
      responses: { 204: { description: 'Deleted' } },
      errorCodes: { 400: ['validation_failed', 'confirmation_mismatch'], 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      await service.deleteHousehold(principalOf(req).userId, req.input.params.householdId!, req.input.body.confirmName);
      res.status(204).end();
    },
  );

  api.route(
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
      params: s.HouseholdIdParams,
      body: s.CompleteOnboardingBody,
      responses: { 200: { description: 'Completed (now or before)', schema: s.CompleteOnboardingSchema } },
      errorCodes: { 400: ['validation_failed'], ...notMember, 409: ['onboarding_in_progress'] },
    },
    async (req, res) => {
      res.json(await service.completeOnboarding(principalOf(req).userId, req.input.params.householdId!, req.input.body));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/invitations',
      operationId: 'createInvitation',
      auth: true,
      summary: 'Invite an Adult or a Junior (Owner or Adult); the code is random, single use, valid 7 days',
      params: s.HouseholdIdParams,
      body: s.CreateInvitationBody,
      responses: { 201: { description: 'The invitation; hand its code to the invitee', schema: s.InvitationSchema } },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      res.status(201).json(await service.invite(principalOf(req).userId, req.input.params.householdId!, req.input.body.role));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/invitations',
      operationId: 'listInvitations',
      auth: true,
      summary: "The household's outstanding invitation codes (Owner or Adult), newest first",
      description:
        'Unused and unexpired codes, each with its role, expiry, when it was minted and by which member (`createdBy`, a memberId). ' +
        'A code whose minting member has left, was removed, was made a Junior or deleted their account is no longer outstanding: it was revoked then. ' +
        'A Junior gets 403 forbidden; a non-member 404 not_found.',
      params: s.HouseholdIdParams,
      responses: { 200: { description: 'The outstanding codes', schema: s.OutstandingInvitationsSchema } },
      errorCodes: { 403: ['forbidden'], ...notMember },
    },
    async (req, res) => {
      res.json(await service.listInvitations(principalOf(req).userId, req.input.params.householdId!));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}/invitations/{code}',
      operationId: 'revokeInvitation',
      auth: true,
      summary: 'Revoke an outstanding invitation code (Owner or Adult); it is refused from now on',
      description:
        '404 invitation_not_found when the household has no such unused, unexpired code. Racing an acceptance of the same code, exactly one of the two wins: ' +
        'the acceptance (200, and this answers 404) or the revocation (204, and the acceptance answers 404). A Junior gets 403 forbidden; a non-member 404 not_found.',
      params: s.InvitationParams,
      responses: { 204: { description: 'Revoked' } },
      errorCodes: { 400: ['validation_failed'], 403: ['forbidden'], 404: ['not_found', 'invitation_not_found'] },
    },
    async (req, res) => {
      await service.revokeInvitation(principalOf(req).userId, req.input.params.householdId!, req.input.params.code);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/invitations/accept',
      operationId: 'acceptInvitation',
      auth: true,
      summary: 'Join a household with an invitation code',
      description:
        '404 invitation_not_found for an unknown, used, expired or revoked code, and for a code minted before the caller was removed from that household ' +
        '(it stays valid for anyone else). A caller who left the household after the code was minted joins with at most the role they left with ' +
        '(a member made a Junior who leaves cannot come back as an Adult with an older Adult code); the answer says the role given.',
      body: s.AcceptInvitationBody,
      responses: { 200: { description: 'The new membership', schema: s.MembershipSchema } },
      errorCodes: { 400: ['validation_failed', 'value_too_long'], 404: ['invitation_not_found'], 409: ['already_member'] },
    },
    async (req, res) => {
      res.json(await service.acceptInvitation(principalOf(req).userId, req.input.body.code));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/members',
      tokenScope: 'households:read',
      operationId: 'listMembers',
      auth: true,
      summary: 'The members (any member may ask)',
      params: s.HouseholdIdParams,
      responses: { 200: { description: 'Members: the Owner first, then in the order they joined', schema: s.MembersSchema } },
      errorCodes: notMember,
      compiledResponse: true,
      read: service.membersRead,
    },
    async (req, res) => {
      res.json(await service.listMembers(principalOf(req), req.input.params.householdId!, loadedRead(req, service.membersRead)));
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/api/v1/households/{householdId}/members/{memberId}',
      operationId: 'changeMemberRole',
      etag: true,
      current: (req) => service.currentMember(principalOf(req), req.input.params.householdId!, req.input.params.memberId!),
      auth: true,
      summary: "Change a member's role to Adult or Junior (Owner only)",
      description:
        "Takes effect on the member's next request. Making an Adult a Junior retires the calendar feed's URL (they could read it) and revokes the invitation codes they minted. " +
        'Owner is 400 invalid_role (hand the household over with POST …/owner); ' +
        "the Owner's own role cannot change here: 409 owner_must_transfer.",
      params: s.MemberParams,
      body: s.ChangeRoleBody,
      responses: { 200: { description: 'The member as changed', schema: s.MemberSchema } },
      errorCodes: { 400: ['validation_failed', 'invalid_role'], ...memberErrors, 409: ['owner_must_transfer'] },
    },
    async (req, res) => {
      const { householdId, memberId } = req.input.params;
      res.json(await service.changeRole(principalOf(req).userId, householdId, memberId, req.input.body.role));
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/api/v1/households/{householdId}/members/{memberId}',
      operationId: 'removeMember',
      current: (req) => service.currentMember(principalOf(req), req.input.params.householdId!, req.input.params.memberId!),
      auth: true,
      summary: 'Remove a member (Owner), or leave (the member themself)',
      description:
        "The household's data stays; in its meal events the person stays a participant by name, without the memberId. The removed person loses access on their next request; " +
        "when they could read the calendar feed (an Owner or Adult), the feed's URL is retired (adults make a new one); the invitation codes they minted are revoked, " +
        'and a code minted before a removal is refused to them. The Owner removes anyone else; any other member ' +
        'removes only themself (403 forbidden otherwise); the Owner cannot leave: 409 owner_must_transfer (hand over, or delete the household).',
      params: s.MemberParams,
      responses: { 204: { description: 'Removed' } },
      errorCodes: { 400: ['validation_failed'], ...memberErrors, 409: ['owner_must_transfer'] },
    },
    async (req, res) => {
      const { householdId, memberId } = req.input.params;
      await service.removeMember(principalOf(req).userId, householdId, memberId);
      res.status(204).end();
    },
  );

  api.route(
    {
      method: 'post',
      path: '/api/v1/households/{householdId}/owner',
      operationId: 'transferOwnership',
      etag: true,
      auth: true,
      summary: 'Hand the household over to an Adult who has an account (Owner only); the old Owner becomes an Adult',
      description:
        'Atomic: the household has exactly one Owner before and after, also when hand-overs race. 409 invalid_role for a Junior or a member without an account.',
      params: s.HouseholdIdParams,
      body: s.TransferOwnershipBody,
      responses: { 200: { description: 'The household', schema: s.HouseholdSchema } },
      errorCodes: { 400: ['validation_failed'], ...memberErrors, 409: ['invalid_role'] },
    },
    async (req, res) => {
      res.json(await service.transferOwnership(principalOf(req).userId, req.input.params.householdId!, req.input.body.memberId));
    },
  );

  api.route(
    {
      method: 'get',
      path: '/api/v1/households/{householdId}/conversations/{conversationId}',
      operationId: 'getConversation',
      auth: true,
      summary: "A day's thread of the household (any member)",
      params: s.ConversationParams,
      responses: { 200: { description: 'The thread and its messages, oldest first', schema: s.ConversationSchema } },
      errorCodes: notMember,
    },
    async (req, res) => {
      const { householdId, conversationId } = req.input.params;
      res.json(await service.conversation(principalOf(req), householdId, conversationId));
    },
  );

  return api;
}
