/** The IdP session a sign-in created, as the session ticket keeps it for Single Logout. */

/** The IdP session a LogoutRequest ends: the NameID as issued and the SessionIndex. */
export interface SamlSessionReference {
  readonly nameId: string
  readonly nameIdFormat?: string | undefined
  readonly nameQualifier?: string | undefined
  readonly spNameQualifier?: string | undefined
  readonly sessionIndex?: string | undefined
}

/** Ticket token names that keep the {@link SamlSessionReference} (only with SignOutAtProvider). */
export const SESSION_TOKEN_NAMES = {
  nameId: 'saml2_name_id',
  nameIdFormat: 'saml2_name_id_format',
  nameQualifier: 'saml2_name_qualifier',
  spNameQualifier: 'saml2_sp_name_qualifier',
  sessionIndex: 'saml2_session_index'
} as const

export function sessionToTokens (session: SamlSessionReference): Record<string, string> {
  const tokens: Record<string, string> = {}
  for (const [field, name] of Object.entries(SESSION_TOKEN_NAMES)) {
    const value = session[field as keyof SamlSessionReference]
    if (typeof value === 'string' && value !== '') tokens[name] = value
  }
  return tokens
}

export function sessionFromTokens (tokens: Readonly<Record<string, string>> | undefined): SamlSessionReference | undefined {
  const nameId = tokens?.[SESSION_TOKEN_NAMES.nameId]
  if (tokens === undefined || nameId === undefined || nameId === '') return undefined
  return {
    nameId,
    nameIdFormat: tokens[SESSION_TOKEN_NAMES.nameIdFormat],
    nameQualifier: tokens[SESSION_TOKEN_NAMES.nameQualifier],
    spNameQualifier: tokens[SESSION_TOKEN_NAMES.spNameQualifier],
    sessionIndex: tokens[SESSION_TOKEN_NAMES.sessionIndex]
  }
}
