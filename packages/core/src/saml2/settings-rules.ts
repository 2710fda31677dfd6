/**
 * The startup rules of a SAML2 provider's settings (auth-contract.md, "Providers:Saml2", and the
 * named schemes of Type Saml2), for one enabled instance: the contract section, a named scheme,
 * or a definition from the provider source. Certificates and SP keys are read exactly as the
 * provider reads them at startup (plugins/providers/saml2-instance.ts), so check-config finds
 * their problems first. Each problem names the full colon path and never a configured value.
 */
import type { ConfigurationProblem } from '../config/bind.js'
import { checkEndpointUrl, isMissing, problem, requiredKeys } from '../config/rules.js'
import { keyOfInstance, type SettingsRule } from '../config/provider-type.js'
import type { Saml2Configuration, Saml2Instance } from './settings-schema.js'
import { readCertificate } from './certificates.js'
import { readServiceProviderKeys, type ServiceProviderKeyInput } from './keys.js'

/** The SP key settings of a SAML2 section as plain text (the secret ones revealed here, for parsing only). */
export function saml2KeyInput (saml: Saml2Configuration): ServiceProviderKeyInput {
  return {
    signingKey: saml.SigningKey.reveal(),
    signingCertificate: saml.SigningCertificate,
    signingCertificateNext: saml.SigningCertificateNext,
    encryptionKey: saml.EncryptionKey.reveal(),
    encryptionKeyPrevious: saml.EncryptionKeyPrevious.reveal(),
    encryptionCertificate: saml.EncryptionCertificate
  }
}

/** Each non-empty entry of a certificate list that does not parse, named `<key>:<index>`. */
function unreadableCertificates (values: readonly string[], listKey: string): ConfigurationProblem[] {
  return values.flatMap((value, index) => {
    if (value.trim() === '') return []
    try {
      readCertificate(value)
      return []
    } catch {
      return [problem(`${listKey}:${index}`, `${listKey}:${index} is not a PEM or base64 DER X.509 certificate.`)]
    }
  })
}

export const saml2SettingsRule: SettingsRule<Saml2Instance> = (instance, environmentName) => {
  const saml = instance.settings
  const key = (name: string): string => keyOfInstance(instance, name)
  const problems = requiredKeys(instance, { EntityId: saml.EntityId })
  if (saml.LoadMetadata) {
    problems.push(...requiredKeys(instance, { MetadataUrl: saml.MetadataUrl }))
    if (!isMissing(saml.MetadataUrl)) problems.push(...checkEndpointUrl(saml.MetadataUrl, key('MetadataUrl'), environmentName))
    problems.push(...unreadableCertificates(saml.MetadataSigningCertificates, key('MetadataSigningCertificates')))
  } else {
    problems.push(...requiredKeys(instance, { IdpEntityId: saml.IdpEntityId, IdpSingleSignOnUrl: saml.IdpSingleSignOnUrl }))
    if (!isMissing(saml.IdpSingleSignOnUrl)) problems.push(...checkEndpointUrl(saml.IdpSingleSignOnUrl, key('IdpSingleSignOnUrl'), environmentName))
    if (!saml.IdpSigningCertificates.some((value) => !isMissing(value))) {
      problems.push(problem(key('IdpSigningCertificates'), `${key('IdpSigningCertificates')} must contain at least one certificate when ${key('LoadMetadata')} is false.`))
    }
    problems.push(...unreadableCertificates(saml.IdpSigningCertificates, key('IdpSigningCertificates')))
  }
  if (!saml.LoadMetadata && !isMissing(saml.IdpSingleLogoutUrl)) {
    problems.push(...checkEndpointUrl(saml.IdpSingleLogoutUrl, key('IdpSingleLogoutUrl'), environmentName))
  }
  if (saml.SignOutAtProvider && isMissing(saml.SigningKey)) {
    problems.push(problem(key('SigningKey'), `${key('SigningKey')} is required when ${key('SignOutAtProvider')} is true (LogoutRequests must be signed).`))
  }
  for (const keyProblem of readServiceProviderKeys(saml2KeyInput(saml)).problems) {
    problems.push(problem(key(keyProblem.key), `${key(keyProblem.key)} ${keyProblem.message}`))
  }
  return problems
}
