/**
 * The sign-in pipeline's provisioning step (issue 41, items 3 to 5), as a port: after the
 * response is verified and before the sign-in hook, a sign-in of a tenant that a SCIM connection
 * provisions is admitted (with the application roles its directory groups grant) or refused
 * (`deprovisioned`: the SCIM user is deactivated; `not_provisioned`: the connection requires
 * provisioned users and knows none for this person). The SCIM folder implements it
 * (scim/sign-in-admission.ts); without provisioning the step is absent. Plain data.
 */
import type { Claim } from '../session/principal.js'
import type { UserIdentity } from '../session/user-identity.js'
import type { SignInProtocol } from './completion.js'

/** What the step knows of a verified sign-in. */
export interface ProvisioningSignIn {
  readonly scheme: string
  readonly identity: UserIdentity
  /** The `application:tenant` the scheme issued for this sign-in, if any. */
  readonly tenant?: string
  /** The claims as the provider sent them (the connection's ExternalIdClaim is read here). */
  readonly providerClaims: readonly Claim[]
  /** The claims after normalization (`application:email` for linking by e-mail). */
  readonly claims: readonly Claim[]
  /** The protocol that verified the sign-in, when it says (OpenID Connect's `email_verified` is its own). */
  readonly protocol?: SignInProtocol
}

/** What the step did about linking, for the log. */
export type ProvisioningLinking =
  | { readonly linked: 'externalId' | 'email' }
  | { readonly emailNotLinked: string }

/** The step's answer. */
export type ProvisioningDecision =
  | { readonly admitted: true, readonly roles: readonly string[], readonly connection?: string, readonly linking?: ProvisioningLinking }
  | { readonly refused: 'deprovisioned' | 'not_provisioned', readonly connection: string, readonly linking?: ProvisioningLinking }

/** The port. */
export interface ProvisioningAdmission {
  readonly admit: (signIn: ProvisioningSignIn) => Promise<ProvisioningDecision>
}
