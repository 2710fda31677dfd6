/** SAML2 protocol constants shared by the protocol steps. */

/** The claim type the NameID arrives as (claims normalization maps it to the subject). */
export const NAME_ID_CLAIM_TYPE = 'NameID'

/**
 * Common SAML attribute names (OIDs of eduPerson/inetOrgPerson/X.500) mapped below the overrides.
 * Keycloak's built-in "X500 email" mapper sends PKCS #9 emailAddress (1.2.840.113549.1.9.1).
 * Deliberately absent: givenName (2.5.4.42) and surname (2.5.4.4), since there is no
 * application claim for either and composing a display name would guess at order and locale; and
 * Keycloak's group list attribute `member`, since other directories use that name for something
 * else (X.500 `member` lists a group's member DNs): map it per provider (docs/providers/keycloak.md).
 */
export const SAML2_CLAIM_DEFAULTS: Readonly<Record<string, string>> = {
  'urn:oid:0.9.2342.19200300.100.1.3': 'email',
  'urn:oid:1.2.840.113549.1.9.1': 'email',
  'urn:oid:2.16.840.1.113730.3.1.241': 'name',
  'urn:oid:1.3.6.1.4.1.5923.1.1.1.7': 'permission'
}

export const BEARER = 'urn:oasis:names:tc:SAML:2.0:cm:bearer'
export const SUCCESS = 'urn:oasis:names:tc:SAML:2.0:status:Success'

/** Largest inflated logout message (LogoutRequest or LogoutResponse). */
export const LOGOUT_MESSAGE_MAX_BYTES = 64 * 1024
