/**
 * The `Authorization: Basic` credentials of an OAuth 2.0 client (`client_secret_basic`, RFC 6749
 * section 2.3.1), for OpenID Connect (oidc/relying-party.ts) and the vendor slots
 * (oauth/vendor-client.ts) alike.
 *
 * RFC 6749 asks for the client id and secret to be encoded with `application/x-www-form-urlencoded`
 * before base64, and the provider to decode them. Several providers do not decode them
 * (LemonLDAP::NG 2.16, Glewlwyd 2.7.5) and compare the raw text, so every character the encoding
 * changes breaks the sign-in there. openid-client encodes strictly (`-`, `.`, `_`, `~` too, so the
 * ordinary id `project-template-web` goes as `project%2Dtemplate%2Dweb`). This module encodes as
 * ASP.NET does (`Uri.EscapeDataString`): the RFC 3986 unreserved characters `A-Z a-z 0-9 - . _ ~`
 * stay as they are, everything else is percent-encoded as UTF-8 (space as `%20`). A provider that
 * decodes gets the same text back either way; one that does not accepts ordinary ids and secrets.
 */

/** RFC 3986 section 2.3: the characters percent-encoding never needs to change. */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/u

/** `value` with every character outside RFC 3986's unreserved set percent-encoded (UTF-8). */
export function encodeBasicCredential (value: string): string {
  // encodeURIComponent leaves !'()* as they are too; RFC 3986 reserves them.
  return encodeURIComponent(value).replace(/[!'()*]/g, (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`)
}

/**
 * The distinct characters of `value` that {@link encodeBasicCredential} changes, in order of first
 * appearance (empty: a provider that does not decode Basic credentials reads `value` unchanged).
 */
export function charactersChangedByBasicEncoding (value: string): string[] {
  const changed = new Set<string>()
  for (const character of value) if (!UNRESERVED.test(character)) changed.add(character)
  return [...changed]
}

/** The `Authorization` header value for `client_secret_basic`: `Basic base64(id:secret)`, each part encoded. */
export function basicAuthorization (clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${encodeBasicCredential(clientId)}:${encodeBasicCredential(clientSecret)}`).toString('base64')}`
}
