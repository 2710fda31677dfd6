/**
 * The startup rules of `<Root>:DataProtection` (docs/security/keys-and-storage.md, "Key ring"): keys that are strong enough,
 * a key directory startup can use, a discriminator of bounded length. Each problem names the full
 * colon path and never a configured value.
 */
import { problem, type Rule } from '../config/rules.js'
import { inspectKeyStore, keyMaterialOf } from './key-ring.js'

export const dataProtectionKeysAreStrong: Rule = ({ config, rootKey }) =>
  config.DataProtection.Keys.flatMap((key, index) => {
    const path = `${rootKey}:DataProtection:Keys:${index}`
    return keyMaterialOf(key.reveal()) !== undefined ? [] : [problem(path, `${path} must be base64 of at least 32 random bytes.`)]
  })

/** The key directory as startup would find it (read-only here): permissions, a missing, malformed or weak key file. */
export const dataProtectionKeyStoreIsUsable: Rule = ({ config, contentRoot, rootKey }) =>
  contentRoot === undefined ? [] : inspectKeyStore(config.DataProtection.Keys, config.DataProtection.KeyDirectory, contentRoot, rootKey)

export const applicationDiscriminatorIsShort: Rule = ({ config, rootKey }) =>
  config.DataProtection.ApplicationDiscriminator.length > 200
    ? [problem(`${rootKey}:DataProtection:ApplicationDiscriminator`, `${rootKey}:DataProtection:ApplicationDiscriminator must be at most 200 characters.`)]
    : []
