/**
 * Where the core's documents are, as an app names them in a hint it prints: the package ships its
 * docs/ (package.json `files`), so after `npm install` they are under the app's node_modules.
 * Relative to the app root, the directory the app's commands run in.
 */
export const CORE_DOCS_DIRECTORY = 'node_modules/@project-template/core/docs'

/**
 * The providers document (the index of the pages under docs/providers/: OpenID Connect, SAML2,
 * the OAuth vendors, ...), as hints name it.
 */
export const PROVIDERS_DOCUMENT = `${CORE_DOCS_DIRECTORY}/providers.md`

/**
 * The repository's documents that the package does not ship (performance, the generator), by
 * their published address.
 */
export const REPOSITORY_DOCS_URL = 'https://github.com/project-template/project-template/blob/main/docs'

const SHIPPED = /(?<![\w/@.-])docs\/(providers(?:\/[\w-]+)?|security(?:\/[\w-]+)?|errors|audit-events|telemetry|scale-out|provisioning)\.md\b/g
const REPOSITORY = /(?<![\w/@.-])docs\/(performance|generator)\.md\b/g

/**
 * `text` (a schema description) with each `docs/<name>.md` of the core as an app can follow it:
 * a document the package ships under {@link CORE_DOCS_DIRECTORY}, one it does not at
 * {@link REPOSITORY_DOCS_URL}. The app's own documents (`docs/configuration.md`,
 * `docs/deployment.md`) are left as they are.
 */
export function asApplicationReferences (text: string): string {
  return text.replace(SHIPPED, `${CORE_DOCS_DIRECTORY}/$1.md`).replace(REPOSITORY, `${REPOSITORY_DOCS_URL}/$1.md`)
}
