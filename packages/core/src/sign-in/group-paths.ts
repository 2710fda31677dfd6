/**
 * Group claims that arrive as paths. Keycloak's group mappers send the full group path by default
 * (`/admins`, `/staff/admins`), and a path never equals a group named without its slash
 * (`admins`), so a policy written that way silently denies everyone. Which provider sends paths
 * cannot be known from configuration, so this is checked on the signed-in claims: the first
 * sign-in of a process whose `application:group` values include a path reports it once
 * (`authorization.group_path_mismatch`, docs/providers/keycloak.md).
 */
import type { AuthorizationConfiguration } from '../config/schema.js'
import { ApplicationClaimTypes, type Claim } from '../session/principal.js'

/** A policy setting that names groups: its colon path and its values. */
interface GroupSetting {
  readonly key: string
  readonly values: readonly string[]
}

/** The configured policies that read `application:group` (role or permission claim type set to it). */
function groupSettings (authorization: AuthorizationConfiguration, rootKey: string): GroupSetting[] {
  const settings: GroupSetting[] = []
  if (authorization.RoleClaimType.trim() === ApplicationClaimTypes.Group) {
    settings.push({ key: `${rootKey}:Authorization:AdministratorRoles`, values: authorization.AdministratorRoles })
  }
  if (authorization.PermissionClaimType.trim() === ApplicationClaimTypes.Group) {
    settings.push({ key: `${rootKey}:Authorization:ManageApplicationPermissions`, values: authorization.ManageApplicationPermissions })
  }
  return settings
}

export interface GroupPathMismatch {
  /** Configured keys naming, without its leading slash, a group that arrived as a path. */
  readonly keys: readonly string[]
}

/**
 * Undefined when no group arrived as a path, or when the configured policies already name groups
 * by path (a value starting with `/`) and none names an arrived path's last segment without it.
 * Otherwise the keys that name such a group without the slash (empty when no configured policy
 * reads groups: policies in code cannot be inspected, so the path shape itself is reported), named
 * under the application's `rootKey`.
 */
export function findGroupPathMismatch (claims: readonly Claim[], authorization: AuthorizationConfiguration, rootKey: string): GroupPathMismatch | undefined {
  const paths = claims.filter((claim) => claim.type === ApplicationClaimTypes.Group && claim.value.startsWith('/')).map((claim) => claim.value)
  if (paths.length === 0) return undefined
  const lastSegments = new Set(paths.map((path) => path.slice(path.lastIndexOf('/') + 1)))
  const settings = groupSettings(authorization, rootKey)
  const keys = settings
    .filter((setting) => setting.values.some((value) => !value.trim().startsWith('/') && lastSegments.has(value.trim())))
    .map((setting) => setting.key)
  if (keys.length > 0) return { keys }
  const namesPaths = settings.some((setting) => setting.values.some((value) => value.trim().startsWith('/')))
  return namesPaths ? undefined : { keys: [] }
}
