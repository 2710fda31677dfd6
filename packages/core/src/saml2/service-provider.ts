/**
 * The SAML2 service provider, one file per protocol step (errors.ts, constants.ts,
 * node-saml-options.ts, authn-request.ts, sp-metadata.ts, response-envelope.ts, assertion.ts,
 * encrypted-assertion.ts, session-reference.ts, sp-logout.ts), re-exported here: AuthnRequest by the HTTP-Redirect binding and
 * validation of responses posted to the Assertion Consumer Service, on top of
 * @node-saml/node-saml. node-saml checks the XML signatures, the time conditions and the audience;
 * this module closes what it leaves to its caller:
 *   - a DOCTYPE (or entity declaration) is refused before any parser sees the message;
 *   - comments and processing instructions are refused (comment-injection into a signed NameID);
 *   - InResponseTo is checked against the request id kept in the flow's correlation cookie, so any
 *     instance can check it (node-saml's own cache is in-memory); unsolicited responses are
 *     refused unless AllowUnsolicitedResponses;
 *   - Destination and the bearer SubjectConfirmationData Recipient must equal the ACS URL;
 *   - the Response and Assertion Issuer must equal the IdP entity id;
 *   - with ValidateCertificates, signing certificates outside their validity period are not trusted;
 *   - an assertion id is accepted once (bounded replay cache until its NotOnOrAfter).
 * Everything that becomes a claim is read from the XML that the signature covers (node-saml's
 * verified output), never from the posted document.
 */
export * from './errors.js'
export * from './constants.js'
export type { Saml2ServiceProviderSettings } from './node-saml-options.js'
export * from './authn-request.js'
export * from './sp-metadata.js'
export * from './response-envelope.js'
export * from './session-reference.js'
export * from './encrypted-assertion.js'
export * from './assertion.js'
export * from './sp-logout.js'
