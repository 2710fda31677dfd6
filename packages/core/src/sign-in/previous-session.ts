/**
 * The session a sign-in ends (docs/security.md, "Revocation";
 * issue 26, item 6). Every sign-in ends the session the browser had. A callback that arrives as a
 * cross-site POST (the SAML2 ACS, OpenID Connect `form_post`) does not carry the SameSite=Lax
 * session cookie, so the session id read at the challenge (a top-level navigation of the app's own
 * site, which carries it) is sealed into the flow's correlation cookie and ended on completion.
 * Plain inputs and results: no Fastify types here.
 */

/**
 * The session to end after a sign-in, besides the one the callback itself carried (which
 * `reply.signIn` ends): the id sealed at the challenge, unless it is that same session.
 */
export function previousSessionToEnd (sealedAtChallenge: string | undefined, carriedByCallback: string | undefined): string | undefined {
  if (sealedAtChallenge === undefined || sealedAtChallenge === '') return undefined
  return sealedAtChallenge === carriedByCallback ? undefined : sealedAtChallenge
}
