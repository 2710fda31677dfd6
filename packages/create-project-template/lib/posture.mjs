// @ts-check
/**
 * The two postures `--authProvider` chooses between (auth-contract.md, "Authentication" rule 7):
 * `cookie` keeps the template's closed-by-default appsettings.json; `none` turns application
 * authentication, cookie authentication and the authenticated fallback off.
 */

/** Valid `--authProvider` values; the first is the default. */
export const AUTH_PROVIDERS = /** @type {const} */ (['cookie', 'none'])

/** @typedef {typeof AUTH_PROVIDERS[number]} AuthProvider */

/**
 * One line per posture, for `--help`, the prompt and docs.
 * @type {Record<AuthProvider, string>}
 */
export const POSTURE_SUMMARY = {
  cookie: 'closed by default: cookie session authentication, every route without metadata needs a signed-in user',
  none: 'authentication off: routes without metadata are public; not a production identity configuration'
}

/**
 * @param {string} value
 * @returns {value is AuthProvider}
 */
export function isAuthProvider (value) {
  return /** @type {readonly string[]} */ (AUTH_PROVIDERS).includes(value)
}

/**
 * Returns `appsettings.json` for the chosen posture. `cookie` returns the text untouched; `none`
 * sets `<root>:Authentication:Enabled`, `<root>:Authentication:Cookie:Enabled` and
 * `<root>:Authorization:RequireAuthenticatedUserByDefault` to false, keeping key order and the
 * file's layout (objects one key a line, arrays of scalars on one line).
 * @param {string} text the (already renamed) appsettings.json
 * @param {AuthProvider} provider
 * @param {string} rootKey the configuration root key (the project name)
 * @returns {string}
 */
export function appsettingsFor (text, provider, rootKey) {
  if (provider === 'cookie') return text
  const document = JSON.parse(text)
  const root = section(document, rootKey)
  const authentication = section(root, 'Authentication')
  authentication.Enabled = false
  // Cookie:Enabled goes first in its section, next to the switch it depends on.
  const cookie = { Enabled: false, ...section(authentication, 'Cookie') }
  cookie.Enabled = false
  authentication.Cookie = cookie
  section(root, 'Authorization').RequireAuthenticatedUserByDefault = false
  return formatJson(document) + '\n'
}

/**
 * The object at `parent[key]`, created when absent.
 * @param {Record<string, any>} parent
 * @param {string} key
 * @returns {Record<string, any>}
 */
function section (parent, key) {
  const value = parent[key]
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value
  if (value !== undefined) throw new Error(`appsettings.json: ${key} is not an object.`)
  parent[key] = {}
  return parent[key]
}

/**
 * JSON in the layout the template's settings files use: two-space indentation, one key a line,
 * arrays of scalars on one line (`["openid", "profile", "email"]`).
 * @param {unknown} value
 * @param {string} [indent]
 * @returns {string}
 */
export function formatJson (value, indent = '') {
  const inner = indent + '  '
  if (Array.isArray(value)) {
    if (value.every((item) => item === null || typeof item !== 'object')) {
      return `[${value.map((item) => JSON.stringify(item)).join(', ')}]`
    }
    if (value.length === 0) return '[]'
    return `[\n${value.map((item) => inner + formatJson(item, inner)).join(',\n')}\n${indent}]`
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
    if (entries.length === 0) return '{}'
    return `{\n${entries.map(([key, item]) => `${inner}${JSON.stringify(key)}: ${formatJson(item, inner)}`).join(',\n')}\n${indent}}`
  }
  return JSON.stringify(value)
}
